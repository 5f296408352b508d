#pragma once
// A list of files the user builds: Add… (a file picker), Remove (the selected rows, or Delete on
// the list), files dropped on it. Each row holds one path; a row may carry a note (where it came
// from, e.g. "loaded in the Health panel") shown beside the name and in its tooltip.
#include <QStringList>
#include <QWidget>

class QListWidget;
class QPushButton;

namespace faultline::views {

class FileListEditor : public QWidget {
    Q_OBJECT
public:
    // `filter`: the picker's name filter.
    FileListEditor(const QString& title, const QString& filter, QWidget* parent = nullptr);

    QStringList paths() const;
    // Adds paths not listed yet, each with `note` (may be empty).
    void addPaths(const QStringList& paths, const QString& note = {});
    void clear();
    QListWidget* list() const { return m_list; }
    QPushButton* addButton() const { return m_add; }
    QPushButton* removeButton() const { return m_remove; }

signals:
    void changed();

public slots:
    void removeSelected();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QString m_filter;
    QListWidget* m_list = nullptr;
    QPushButton* m_add = nullptr;
    QPushButton* m_remove = nullptr;
};

}  // namespace faultline::views
