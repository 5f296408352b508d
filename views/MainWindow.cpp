#include "MainWindow.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QPalette>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTableView>

#include "FileLoader.h"
#include "TensorTableModel.h"
#include "core/report/InspectReport.h"

namespace faultline::views {
namespace {
constexpr int kMaxRecentFiles = 10;
const char* kRecentKey = "recentFiles";
const char* kDarkKey = "darkTheme";
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setWindowTitle(tr("Faultline"));
    setAcceptDrops(true);
    setObjectName(QStringLiteral("MainWindow"));

    m_loader = new FileLoader(this);
    connect(m_loader, &FileLoader::opened, this, &MainWindow::onFileOpenedOnUi);
    connect(m_loader, &FileLoader::failed, this, &MainWindow::onFileFailedOnUi);

    m_tensorModel = new TensorTableModel(this);
    m_tensorProxy = new QSortFilterProxyModel(this);
    m_tensorProxy->setSourceModel(m_tensorModel);
    m_tensorView = new QTableView;
    m_tensorView->setObjectName(QStringLiteral("tensorTable"));
    m_tensorView->setModel(m_tensorProxy);
    m_tensorView->setSortingEnabled(true);
    m_tensorView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_tensorView->horizontalHeader()->setStretchLastSection(true);
    m_tensorView->verticalHeader()->hide();

    auto* dock = new QDockWidget(tr("Tensors"), this);
    dock->setObjectName(QStringLiteral("tensorsDock"));
    dock->setWidget(m_tensorView);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    auto* placeholder = new QLabel(tr("Open a snapshot, trace or safetensors file (Ctrl+O), or drop it here."));
    placeholder->setAlignment(Qt::AlignCenter);
    setCentralWidget(placeholder);

    m_statusLabel = new QLabel(tr("Nothing loaded"));
    statusBar()->addPermanentWidget(m_statusLabel, 1);

    createActions();

    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("windowState")).toByteArray());
    applyTheme(settings.value(QLatin1String(kDarkKey), false).toBool());
    if (!settings.contains(QStringLiteral("geometry"))) resize(1280, 800);
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, [this] {
        const QStringList paths = QFileDialog::getOpenFileNames(
            this, tr("Open tensor files"), QString(),
            tr("Tensor files (*.h5 *.hdf5 *.safetensors);;All files (*)"));
        if (!paths.isEmpty()) openFiles(paths);
    });
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* dark = view->addAction(tr("&Dark Theme"));
    dark->setCheckable(true);
    dark->setChecked(QSettings().value(QLatin1String(kDarkKey), false).toBool());
    connect(dark, &QAction::toggled, this, [this](bool on) {
        QSettings().setValue(QLatin1String(kDarkKey), on);
        applyTheme(on);
    });
}

void MainWindow::openFiles(const QStringList& paths)
{
    if (paths.isEmpty()) return;
    m_pendingPath = paths.front();
    m_statusLabel->setText(tr("Opening %1…").arg(m_pendingPath));
    m_loader->openOnWorker(m_pendingPath);
}

void MainWindow::onFileOpenedOnUi(quint64, std::shared_ptr<const TensorFile> file)
{
    // Opening another file resets every view.
    m_tensorModel->setFile(file);
    m_tensorView->resizeColumnsToContents();
    uint64_t bytes = 0;
    for (const TensorInfo& t : file->tensors()) bytes += t.byteCount();
    const QString path = QString::fromStdString(file->path());
    m_statusLabel->setText(tr("%1 — %2, %3 tensors, %4")
                               .arg(path, QString::fromUtf8(fileFormatName(file->format())))
                               .arg(file->tensors().size())
                               .arg(QString::fromStdString(formatBytes(bytes))));
    setWindowTitle(tr("%1 — Faultline").arg(QFileInfo(path).fileName()));
    addRecentFile(path);
    emit fileShown(path);
}

void MainWindow::onFileFailedOnUi(quint64, const QString& message)
{
    // What was loaded before stays loaded; the error is shown where the user looks.
    m_lastError = message;
    statusBar()->showMessage(message, 15000);
    m_statusLabel->setText(m_tensorModel->file() ? QString::fromStdString(m_tensorModel->file()->path())
                                                 : tr("Nothing loaded"));
    emit errorShown(message);
}

void MainWindow::addRecentFile(const QString& path)
{
    QSettings settings;
    QStringList recent = settings.value(QLatin1String(kRecentKey)).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecentFiles) recent.removeLast();
    settings.setValue(QLatin1String(kRecentKey), recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QLatin1String(kRecentKey)).toStringList();
    for (const QString& path : recent)
        m_recentMenu->addAction(path, this, [this, path] { openFiles({path}); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::applyTheme(bool dark)
{
    qApp->setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    if (!dark) {
        qApp->setPalette(qApp->style()->standardPalette());
        return;
    }
    QPalette p;
    p.setColor(QPalette::Window, QColor(37, 41, 48));
    p.setColor(QPalette::WindowText, QColor(220, 223, 228));
    p.setColor(QPalette::Base, QColor(28, 31, 36));
    p.setColor(QPalette::AlternateBase, QColor(44, 49, 58));
    p.setColor(QPalette::Text, QColor(220, 223, 228));
    p.setColor(QPalette::Button, QColor(44, 49, 58));
    p.setColor(QPalette::ButtonText, QColor(220, 223, 228));
    p.setColor(QPalette::Highlight, QColor(255, 90, 54));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::ToolTipBase, QColor(44, 49, 58));
    p.setColor(QPalette::ToolTipText, QColor(220, 223, 228));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(120, 124, 130));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(120, 124, 130));
    qApp->setPalette(p);
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    QSettings settings;
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("windowState"), saveState());
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    QStringList paths;
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile()) paths << url.toLocalFile();
    openFiles(paths);
}

}  // namespace faultline::views
