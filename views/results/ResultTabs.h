#pragma once
// The results files open beside the incident, one closable tab each (a ResultView). Opening a
// file that is open already shows it again, re-read.
#include <QTabWidget>

#include "core/incident/ResultTables.h"

namespace faultline::views {

class ResultView;

class ResultTabs : public QTabWidget {
    Q_OBJECT
public:
    explicit ResultTabs(QWidget* parent = nullptr);

    // Adds (or replaces) the tab of `path` and makes it current.
    ResultView* showResult(const QString& path, ResultKind kind, ResultSummary summary);
    // The open tab of `path`, or null.
    ResultView* viewOf(const QString& path) const;
    QList<ResultView*> views() const;
};

}  // namespace faultline::views
