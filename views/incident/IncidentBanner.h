#pragma once
// The strip above the plots: the incident's story in one or two lines (where the corruption
// enters, how much, which pattern), in-page progress with Cancel while something loads, and
// errors that stay visible until dismissed (never a modal dialog).
#include <QWidget>
#include <memory>

#include "views/incident/Incident.h"

class QLabel;
class QProgressBar;
class QToolButton;

namespace faultline::views {

class IncidentBanner : public QWidget {
    Q_OBJECT
public:
    explicit IncidentBanner(QWidget* parent = nullptr);

    void setIncident(std::shared_ptr<const Incident> incident);
    // Shown at once when the progress row appears; later reports are coalesced: the latest is
    // applied once per event-loop turn.
    void showProgress(double fraction, const QString& what);
    void hideProgress();
    // `title` leads in bold ("Could not open:").
    void showError(const QString& message, const QString& title);
    void clearError();

    QString storyText() const;
    QString errorText() const;
    bool progressVisible() const;

    // The story line for an incident (plain text is fine in tests: tags are simple HTML).
    static QString story(const Incident& incident);

signals:
    void cancelRequested();

private:
    void applyProgressOnUi();

    QLabel* m_story = nullptr;
    QWidget* m_progressRow = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_progressText = nullptr;
    QWidget* m_errorRow = nullptr;
    QLabel* m_error = nullptr;
    double m_pendingFraction = 0;
    QString m_pendingText;
    bool m_progressPending = false;
};

}  // namespace faultline::views
