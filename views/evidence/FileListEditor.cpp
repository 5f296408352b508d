#include "views/evidence/FileListEditor.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QListWidget>
#include <QMimeData>
#include <QPushButton>
#include <QUrl>
#include <QVBoxLayout>

namespace faultline::views {

FileListEditor::FileListEditor(const QString& title, const QString& filter, QWidget* parent)
    : QWidget(parent), m_filter(filter)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* head = new QHBoxLayout;
    head->addWidget(new QLabel(title), 1);
    m_add = new QPushButton(tr("Add…"));
    m_add->setAutoDefault(false);
    m_remove = new QPushButton(tr("Remove"));
    m_remove->setAutoDefault(false);
    m_remove->setEnabled(false);
    head->addWidget(m_add);
    head->addWidget(m_remove);
    layout->addLayout(head);
    m_list = new QListWidget;
    m_list->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_list->setAcceptDrops(true);
    m_list->viewport()->setAcceptDrops(true);
    m_list->setToolTip(tr("Drop files here, Add… to pick them, Delete removes the selected ones"));
    m_list->installEventFilter(this);
    m_list->viewport()->installEventFilter(this);
    layout->addWidget(m_list, 1);
    connect(m_add, &QPushButton::clicked, this,
            [this] { addPaths(QFileDialog::getOpenFileNames(this, tr("Add files"), {}, m_filter)); });
    connect(m_remove, &QPushButton::clicked, this, &FileListEditor::removeSelected);
    connect(m_list, &QListWidget::itemSelectionChanged, this,
            [this] { m_remove->setEnabled(!m_list->selectedItems().isEmpty()); });
}

QStringList FileListEditor::paths() const
{
    QStringList out;
    for (int i = 0; i < m_list->count(); ++i) out << m_list->item(i)->data(Qt::UserRole).toString();
    return out;
}

void FileListEditor::addPaths(const QStringList& paths, const QString& note)
{
    const QStringList have = this->paths();
    bool added = false;
    for (const QString& p : paths) {
        if (p.isEmpty() || have.contains(p)) continue;
        const QString name = QFileInfo(p).fileName();
        auto* item = new QListWidgetItem(note.isEmpty() ? name : tr("%1 (%2)").arg(name, note), m_list);
        item->setData(Qt::UserRole, p);
        item->setToolTip(note.isEmpty() ? p : tr("%1\n%2").arg(p, note));
        added = true;
    }
    if (added) emit changed();
}

void FileListEditor::clear()
{
    if (m_list->count() == 0) return;
    m_list->clear();
    emit changed();
}

void FileListEditor::removeSelected()
{
    const QList<QListWidgetItem*> selected = m_list->selectedItems();
    if (selected.isEmpty()) return;
    qDeleteAll(selected);
    emit changed();
}

bool FileListEditor::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_list && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        if (key == Qt::Key_Delete || key == Qt::Key_Backspace) {
            removeSelected();
            return true;
        }
    }
    if (watched == m_list->viewport()) {
        if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove) {
            auto* drag = static_cast<QDropEvent*>(event);
            if (drag->mimeData()->hasUrls()) {
                drag->acceptProposedAction();
                return true;
            }
        } else if (event->type() == QEvent::Drop) {
            auto* drop = static_cast<QDropEvent*>(event);
            QStringList files;
            for (const QUrl& url : drop->mimeData()->urls())
                if (url.isLocalFile()) files << url.toLocalFile();
            addPaths(files);
            drop->acceptProposedAction();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace faultline::views
