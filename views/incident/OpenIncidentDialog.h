#pragma once
// File > Open Incident: one slot per file of an incident (the trace, the suspect snapshot, the
// reference snapshot), each with a file picker and taking a file dropped onto it, and the recent
// incidents (double-click or Enter opens one as it was). The slots start with the files of the
// incident that is open, so a second Open adds to it (a pair beside a trace, a trace beside a
// pair); Clear starts a new incident. Opening a results file is File > Open Results.
#include <QDialog>
#include <QStringList>

class QDialogButtonBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;

namespace faultline::views {

class OpenIncidentDialog : public QDialog {
    Q_OBJECT
public:
    explicit OpenIncidentDialog(QWidget* parent = nullptr);

    // Fills the slots with the open incident's files ("" leaves a slot empty).
    void setIncidentFiles(const QString& trace, const QString& suspect, const QString& reference);
    void clearSlots();

    // What to open, in the order the incident loader takes: the trace, the suspect, the reference
    // (empty slots left out); a recent incident's paths when one was chosen.
    QStringList paths() const;
    // Why Open is disabled ("" when it is enabled).
    QString problem() const { return m_problem; }

    QLineEdit* traceSlot() const { return m_trace; }
    QLineEdit* suspectSlot() const { return m_suspect; }
    QLineEdit* referenceSlot() const { return m_reference; }
    QListWidget* recentList() const { return m_recent; }
    QPushButton* openButton() const { return m_open; }

private:
    QLineEdit* addSlot(QGridLayout* grid, int row, const QString& label, const QString& name,
                       const QString& placeholder, const QString& filter);
    void updateOpenButton();

    QLineEdit* m_trace = nullptr;
    QLineEdit* m_suspect = nullptr;
    QLineEdit* m_reference = nullptr;
    QListWidget* m_recent = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    QPushButton* m_open = nullptr;
    QLabel* m_hint = nullptr;
    QString m_problem;
    QStringList m_recentChosen;
};

}  // namespace faultline::views
