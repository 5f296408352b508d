#pragma once
// How often a campaign replays each op on each target, and how long a run may take: a fixed
// number of repetitions (`replay --reps N`), or until a rate is ruled out (`replay --until-rate
// RATE --confidence C [--budget DURATION]`): repeat until a failure, until no failure in N runs
// puts the rate's upper confidence bound below RATE, or until the budget is spent. The rate and
// the budget are parsed by core's parsers (StoppingRule.h), the CLI's; a field that does not
// parse or is out of range says why beside it, and the campaign does not start.
#include <QString>
#include <QWidget>
#include <chrono>

#include "core/Result.h"
#include "core/replay/StoppingRule.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QStackedWidget;

namespace faultline::views {

class RepetitionOptions : public QWidget {
    Q_OBJECT
public:
    enum class Mode { FixedReps, UntilRate };

    explicit RepetitionOptions(QWidget* parent = nullptr);

    void setMode(Mode mode);
    Mode mode() const;
    void setReps(int reps);
    int reps() const;
    // The until-rate fields as a user types them: "1e-3" (or "0.001", "0.1%"); confidence as a
    // fraction (0.95); budget "" (none), "90s", "10m", "2h".
    void setUntilRate(const QString& rate, double confidence = 0.95, const QString& budget = {});
    void setTimeoutMs(int ms);
    std::chrono::milliseconds timeout() const;

    // The stopping rule of the current settings (untilRate 0 with fixed repetitions), or why the
    // until-rate fields are wrong (ErrorCode::Usage, the message naming the field).
    Result<StoppingRule> stoppingRule() const;
    // The error shown beside the fields ("" when they are fine or the mode is fixed).
    QString errorText() const;
    // Runs per op and target at most: the repetitions, or the clean runs that rule the rate out.
    quint64 runsPerOpAtMost() const;
    // "3 reps", "until a failure or rate < 1e-3 at 95%, budget 10m".
    QString summaryText() const;

    void setRunning(bool running);

signals:
    void changed();

private:
    void validate();

    QComboBox* m_mode = nullptr;
    QStackedWidget* m_pages = nullptr;
    QSpinBox* m_reps = nullptr;
    QLineEdit* m_rate = nullptr;
    QDoubleSpinBox* m_confidence = nullptr;
    QLineEdit* m_budget = nullptr;
    QLabel* m_error = nullptr;
    QDoubleSpinBox* m_timeout = nullptr;
};

}  // namespace faultline::views
