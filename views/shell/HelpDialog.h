#pragma once
// Help > Guide (F1): a short guide to an incident's journey (open, read the story, replay,
// open results beside it, export evidence) and the list of every keyboard shortcut, read from
// the window's menus so that it is never out of date.
#include <QDialog>

class QMenuBar;
class QTextBrowser;

namespace faultline::views {

class HelpDialog : public QDialog {
    Q_OBJECT
public:
    HelpDialog(const QMenuBar* menus, QWidget* parent = nullptr);

    // "Ctrl+O — File › Open Incident…" per action that has a shortcut, in menu order.
    static QStringList shortcutLines(const QMenuBar* menus);
    QTextBrowser* text() const { return m_text; }

private:
    QTextBrowser* m_text = nullptr;
};

}  // namespace faultline::views
