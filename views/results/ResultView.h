#pragma once
// A results file opened read-only beside the incident (campaign, compare, health, evidence, …):
// its headline lines above one sortable table per section (core/incident/ResultTables.h), each
// in a tab. The document is read and summarised off the GUI thread by the caller; this view only
// shows what it is given.
#include <QString>
#include <QWidget>

#include <memory>

#include "core/incident/RateByCondition.h"
#include "core/incident/ResultTables.h"
#include "views/incident/Incident.h"

class QLabel;
class QTabWidget;
class QTableView;

namespace faultline::views {

class ComparisonHeatmap;
class RateByConditionPlot;
class ResultTableModel;

class ResultView : public QWidget {
    Q_OBJECT
public:
    ResultView(const QString& path, ResultKind kind, ResultSummary summary, QWidget* parent = nullptr);

    QString path() const { return m_path; }
    ResultKind kind() const { return m_kind; }
    QString title() const { return QString::fromStdString(m_summary.title); }
    QLabel* headline() const { return m_headline; }
    QTabWidget* sections() const { return m_sections; }
    // The table titled `title` ("Verdicts", "Ops", "Runs", "Tensors", "GPUs", "Check", …), or null.
    QTableView* tableView(const QString& title) const;
    ResultTableModel* model(const QString& title) const;
    // A compare results file's tensors drawn (ComparisonHeatmap), as the first section, shown
    // (in the next event-loop turn).
    void showComparison(std::shared_ptr<const Incident> comparison);
    ComparisonHeatmap* comparison() const { return m_comparison; }
    // An explore results file's failure rate by condition drawn (RateByConditionPlot), as the
    // first section, shown (in the next event-loop turn).
    void showRates(std::shared_ptr<const RateByCondition> rates);
    RateByConditionPlot* rates() const { return m_rates; }

private:
    QString m_path;
    ResultKind m_kind;
    ResultSummary m_summary;
    QLabel* m_headline = nullptr;
    QTabWidget* m_sections = nullptr;
    ComparisonHeatmap* m_comparison = nullptr;
    RateByConditionPlot* m_rates = nullptr;
};

}  // namespace faultline::views
