#pragma once
// The replay panel: which ops (all / divergent / the selected one), which targets
// (TargetChooser: cpu, the simulated fault models, the suspect's simulated defect preselected,
// the local GPUs), how many repetitions (RepetitionOptions: a fixed number, or until a rate is
// ruled out, as `replay --until-rate`) and how long a run may take; Run starts a campaign on a
// worker thread (one faultline-worker process per target), Cancel stops it after the runs in
// flight. A live table shows each target's runs, failures, rate with its 95% interval and
// verdict; after an adaptive campaign a second table (AdaptiveStopsModel) says for each op and
// target what stopped its runs and what they rule out.
//
// Every campaign keeps its evidence: a results file (the CLI's `replay --out`, same core code)
// and the journal beside it, written as runs finish. The file goes where "Save results to" says,
// or next to the trace as <trace-stem>-replay-<timestamp>.h5. A cancelled campaign keeps its
// journal, and Resume continues the campaign journaled beside the results file, skipping the
// runs it holds (the CLI's --resume). Tile->SM maps the targets recorded go into the
// incident's replaySmMaps for the heatmap. "Reference" names a checked target known to be healthy
// (the CLI's --reference): peers of it must reproduce its bits; by default the peers' majority.
#include <QWidget>
#include <memory>
#include <optional>

#include "core/replay/Campaign.h"
#include "views/incident/Incident.h"

class QButtonGroup;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QTableView;
class QTimer;

namespace faultline::views {

class AdaptiveStopsModel;
class CampaignRunner;
class RepetitionOptions;
class ReplayResultsModel;
class TargetChooser;

class ReplayPanel : public QWidget {
    Q_OBJECT
public:
    enum class OpSelection { All, Divergent, Selected };

    explicit ReplayPanel(QWidget* parent = nullptr);
    ~ReplayPanel() override;

    // A new incident: cancels a running campaign, clears the table, rebuilds the target list.
    void setIncident(std::shared_ptr<const Incident> incident);
    // The op selected in the tree (for OpSelection::Selected); nullopt when none.
    void setSelectedOp(std::optional<size_t> opIndex);

    void setOpSelection(OpSelection selection);
    OpSelection opSelection() const;
    // The campaign op selection text for the current choice ("" = all).
    QString opSelectionText() const;
    // Checks exactly these targets (adding ones not in the list); returns false when one does
    // not parse (the error is shown).
    bool setCheckedTargets(const QStringList& specs);
    // Normalised specs of the checked targets.
    QStringList checkedTargets() const;
    // Every target offered, normalised.
    QStringList availableTargets() const;
    // The reference target ("" = the peers' majority). setReference fails (false) unless `spec`
    // is "" or a checked target.
    bool setReference(const QString& spec);
    QString reference() const;
    // Fixed repetitions (and switches the repetitions to that mode).
    void setReps(int reps);
    void setTimeoutMs(int ms);
    // The repetitions: fixed, or until a rate is ruled out (its fields, their inline errors).
    RepetitionOptions* repetitionOptions() const { return m_repetitions; }
    // Where the next campaign's results go ("" = next to the trace, a new name each time).
    void setResultsPath(const QString& path);
    // This machine's GPUs (DevicesPanel::localGpusListed): offered as unchecked targets.
    void setLocalGpus(const QStringList& specs, const QStringList& labels);
    QString resultsPath() const;
    // The results file of the running or last campaign ("" before the first).
    QString lastResultsPath() const { return m_lastResultsPath; }
    // The default results file for a campaign started now (a name not yet taken).
    QString defaultResultsPath() const;

    // Starts a campaign with the current settings; false (with the reason shown) when it cannot.
    bool start();
    // Continues the campaign journaled beside resultsPath() (the last campaign's file when no
    // path was chosen) with the current settings, which must be that campaign's targets, ops
    // and repetitions; journaled runs are kept, not run again.
    bool resume();
    // Whether there is a journal to resume (resume() still checks it fits the settings).
    bool canResume() const;
    void cancel();
    bool isRunning() const;
    QString stateText() const;
    QString lastError() const { return m_lastError; }
    ReplayResultsModel* resultsModel() const { return m_results; }
    QTableView* resultsView() const { return m_table; }
    // An adaptive campaign's op × target stops (empty, and its table hidden, otherwise).
    AdaptiveStopsModel* stopsModel() const { return m_stops; }
    QTableView* stopsView() const { return m_stopsTable; }
    std::shared_ptr<const CampaignReport> lastReport() const { return m_report; }

signals:
    void started();
    // The campaign ended (cancelled: stopped early, verdicts are partial).
    void finished(bool cancelled);
    void failed(const QString& message);
    void stateChanged(const QString& state);
    // A campaign recorded tile->SM maps for these ops (now in the incident's replaySmMaps).
    void smMapsRecorded(const QList<qulonglong>& ops);

private:
    bool startCampaign(bool resume);
    QString resumablePath() const;
    void chooseResultsPath();
    void recordSmMaps(const CampaignReport& report);
    void showError(const QString& message);
    void updateControls();
    void fitColumns();
    void setState(const QString& state);
    void onRunFinishedOnUi(quint64 job, quint64 done, quint64 total, const QString& what);
    void onFinishedOnUi(quint64 job, std::shared_ptr<const CampaignReport> report);
    void onFailedOnUi(quint64 job, const QString& message);

    CampaignRunner* m_runner = nullptr;
    ReplayResultsModel* m_results = nullptr;
    AdaptiveStopsModel* m_stops = nullptr;
    QButtonGroup* m_opGroup = nullptr;
    QRadioButton* m_allOps = nullptr;
    QRadioButton* m_divergentOps = nullptr;
    QRadioButton* m_selectedOp = nullptr;
    TargetChooser* m_targets = nullptr;
    RepetitionOptions* m_repetitions = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_resume = nullptr;
    QLineEdit* m_resultsPath = nullptr;
    QPushButton* m_browse = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_stateLabel = nullptr;
    QLabel* m_note = nullptr;
    QTableView* m_table = nullptr;
    QTableView* m_stopsTable = nullptr;
    QTimer* m_clock = nullptr;  // refreshes the running timers while a campaign runs

    std::shared_ptr<const Incident> m_incident;
    std::optional<size_t> m_selectedOpIndex;
    std::shared_ptr<const CampaignReport> m_report;
    QString m_state;
    QString m_lastError;
    QString m_lastResultsPath;
    bool m_pathIsDefault = false;  // the path field shows a default name, not one the user chose
    quint64 m_job = 0;
    quint64 m_done = 0, m_total = 0;
};

}  // namespace faultline::views
