#include "views/incident/OpenIncidentDialog.h"

#include <QDialogButtonBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QPushButton>
#include <QVBoxLayout>

#include "views/shell/RecentFiles.h"

namespace faultline::views {
namespace {

// A path field that takes a file dropped onto it (the first local file of the drop).
class DropPathEdit : public QLineEdit {
public:
    DropPathEdit() { setAcceptDrops(true); }

protected:
    void dragEnterEvent(QDragEnterEvent* event) override
    {
        if (firstLocalFile(event->mimeData()).isEmpty()) return event->ignore();
        event->acceptProposedAction();
    }
    void dragMoveEvent(QDragMoveEvent* event) override { event->acceptProposedAction(); }
    void dropEvent(QDropEvent* event) override
    {
        const QString path = firstLocalFile(event->mimeData());
        if (path.isEmpty()) return event->ignore();
        setText(path);
        event->acceptProposedAction();
    }

private:
    static QString firstLocalFile(const QMimeData* mime)
    {
        if (!mime || !mime->hasUrls()) return {};
        for (const QUrl& url : mime->urls())
            if (url.isLocalFile()) return url.toLocalFile();
        return {};
    }
};

const char* const kSnapshots = "Snapshots (*.h5 *.hdf5 *.safetensors);;All files (*)";

}  // namespace

OpenIncidentDialog::OpenIncidentDialog(QWidget* parent) : QDialog(parent)
{
    setObjectName(QStringLiteral("openIncidentDialog"));
    setWindowTitle(tr("Open Incident"));
    auto* layout = new QVBoxLayout(this);
    auto* intro =
        new QLabel(tr("An incident is a trace, a pair of snapshots (suspect and reference), or both. "
                      "Choose each file, or drop it onto its field."));
    intro->setWordWrap(true);
    layout->addWidget(intro);

    auto* grid = new QGridLayout;
    m_trace = addSlot(grid, 0, tr("&Trace:"), QStringLiteral("traceSlot"),
                      tr("incident-trace.h5 (faultline_capture, trace v1)"),
                      tr("Traces (*.h5 *.hdf5);;All files (*)"));
    m_suspect = addSlot(grid, 1, tr("&Suspect snapshot:"), QStringLiteral("suspectSlot"),
                        tr("the suspect GPU's checkpoint (HDF5 or safetensors)"), tr(kSnapshots));
    m_reference = addSlot(grid, 2, tr("&Reference snapshot:"), QStringLiteral("referenceSlot"),
                          tr("a healthy GPU's checkpoint of the same step"), tr(kSnapshots));
    layout->addLayout(grid);

    auto* recentLabel = new QLabel(tr("Recent &incidents (double-click to open):"));
    m_recent = new QListWidget;
    m_recent->setObjectName(QStringLiteral("recentIncidents"));
    recentLabel->setBuddy(m_recent);
    for (const QStringList& paths : RecentFiles::load()) {
        auto* item = new QListWidgetItem(RecentFiles::label(paths), m_recent);
        item->setData(Qt::UserRole, paths);
        item->setToolTip(paths.join(QLatin1Char('\n')));
    }
    m_recent->setMaximumHeight(130);
    layout->addWidget(recentLabel);
    layout->addWidget(m_recent);
    auto openRecent = [this](QListWidgetItem* item) {
        if (!item) return;
        m_recentChosen = item->data(Qt::UserRole).toStringList();
        accept();
    };
    connect(m_recent, &QListWidget::itemActivated, this, openRecent);

    m_hint = new QLabel;
    m_hint->setObjectName(QStringLiteral("openIncidentHint"));
    m_hint->setWordWrap(true);
    layout->addWidget(m_hint);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel);
    m_open = m_buttons->button(QDialogButtonBox::Open);
    m_open->setDefault(true);  // Enter in a slot opens
    auto* clear = m_buttons->addButton(tr("C&lear"), QDialogButtonBox::ResetRole);
    clear->setObjectName(QStringLiteral("clearSlots"));
    clear->setAutoDefault(false);
    clear->setToolTip(tr("Empty every slot: open a new incident instead of adding to the open one"));
    connect(clear, &QPushButton::clicked, this, &OpenIncidentDialog::clearSlots);
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
        m_recentChosen.clear();
        accept();
    });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(m_buttons);
    resize(720, sizeHint().height());
    updateOpenButton();
}

QLineEdit* OpenIncidentDialog::addSlot(QGridLayout* grid, int row, const QString& label, const QString& name,
                                       const QString& placeholder, const QString& filter)
{
    auto* edit = new DropPathEdit;
    edit->setObjectName(name);
    edit->setPlaceholderText(placeholder);
    edit->setClearButtonEnabled(true);
    auto* title = new QLabel(label);
    title->setBuddy(edit);
    auto* browse = new QPushButton(tr("Browse…"));
    browse->setObjectName(name + QStringLiteral("Browse"));
    browse->setAutoDefault(false);  // Enter opens the incident, never a file picker
    connect(browse, &QPushButton::clicked, this, [this, edit, filter, label] {
        QString start = edit->text().isEmpty() ? QString() : QFileInfo(edit->text()).absolutePath();
        if (start.isEmpty())
            for (QLineEdit* other : {m_trace, m_suspect, m_reference})
                if (other && !other->text().isEmpty()) start = QFileInfo(other->text()).absolutePath();
        QString caption = label;
        caption.remove(QLatin1Char('&'));
        const QString path = QFileDialog::getOpenFileName(this, caption, start, filter);
        if (!path.isEmpty()) edit->setText(path);
    });
    connect(edit, &QLineEdit::textChanged, this, &OpenIncidentDialog::updateOpenButton);
    grid->addWidget(title, row, 0);
    grid->addWidget(edit, row, 1);
    grid->addWidget(browse, row, 2);
    return edit;
}

void OpenIncidentDialog::setIncidentFiles(const QString& trace, const QString& suspect,
                                          const QString& reference)
{
    m_trace->setText(trace);
    m_suspect->setText(suspect);
    m_reference->setText(reference);
}

void OpenIncidentDialog::clearSlots()
{
    setIncidentFiles({}, {}, {});
}

QStringList OpenIncidentDialog::paths() const
{
    if (!m_recentChosen.isEmpty()) return m_recentChosen;
    QStringList out;
    for (QLineEdit* edit : {m_trace, m_suspect, m_reference})
        if (!edit->text().trimmed().isEmpty()) out << edit->text().trimmed();
    return out;
}

void OpenIncidentDialog::updateOpenButton()
{
    const bool trace = !m_trace->text().trimmed().isEmpty();
    const bool suspect = !m_suspect->text().trimmed().isEmpty();
    const bool reference = !m_reference->text().trimmed().isEmpty();
    m_problem.clear();
    if (!trace && !suspect && !reference)
        m_problem = tr("Choose a trace, a pair of snapshots, or both.");
    else if (reference && !suspect)
        m_problem = tr("A reference is compared with a suspect snapshot: choose the suspect too.");
    else
        for (QLineEdit* edit : {m_trace, m_suspect, m_reference}) {
            const QString path = edit->text().trimmed();
            if (!path.isEmpty() && !QFileInfo::exists(path)) {
                m_problem = tr("No such file: %1").arg(path);
                break;
            }
        }
    m_open->setEnabled(m_problem.isEmpty());
    m_hint->setText(m_problem);
}

}  // namespace faultline::views
