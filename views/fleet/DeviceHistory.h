#pragma once
// One GPU's history from the ledger as the device history view draws it (DeviceHistoryView.h):
// core's LedgerTimeline (core/ledger/LedgerTimeline.h, Qt-free) converted once, off the GUI thread,
// into marks on a time axis per lane (events, health snapshots and their flags, campaigns, evidence
// bundles), campaign failure rates with their 95% intervals, the growth of the health counters and
// the rules that fired with their reasons. Times are seconds since the epoch (UTC), as QCustomPlot's
// date-time ticker reads them.
#include <QString>
#include <QStringList>
#include <QVector>
#include <array>
#include <string>
#include <vector>

namespace faultline {
struct LedgerTimeline;
}

namespace faultline::views {

// The rows of the timeline, top to bottom.
enum class HistoryLane { Identity, Boot, Reset, Xid, SXid, Health, Flags, Campaign, Evidence, Count };
inline constexpr size_t kHistoryLaneCount = size_t(HistoryLane::Count);
QString historyLaneName(HistoryLane lane);

struct HistoryMark {
    double t = 0;     // seconds since the epoch, UTC
    QString summary;  // the timeline's line for a person
};

// One campaign target's failure rate: the rate and its Wilson 95% interval.
struct HistoryRate {
    double t = 0, rate = 0, low = 0, high = 0;
    quint64 runs = 0, failures = 0;
    QString verdict, summary;
    bool failing = false;  // the verdict says silent data corruption (LedgerRules.h: sdcPositive)
};

// A health counter over the snapshots that report it, in time order, as steps: of a run of
// snapshots with one value, the first and the last are kept.
struct HistoryCounter {
    QString name;
    QVector<double> t, value;
};

struct HistoryFinding {
    QString rule, conclusion, reason;
};

struct DeviceHistory {
    QString key, location;
    QString error;  // non-empty: the history could not be read (names the ledger or the GPU)
    QStringList serials, uuids;
    std::array<std::vector<HistoryMark>, kHistoryLaneCount> lanes;  // each in time order
    std::vector<HistoryRate> rates;                                 // in time order
    std::vector<HistoryCounter> counters;
    std::vector<HistoryFinding> findings;
    size_t entries = 0, undated = 0;  // timeline entries, and those without a readable time (not drawn)
    double first = 0, last = 0;       // the time span of what is drawn

    const std::vector<HistoryMark>& lane(HistoryLane l) const { return lanes[size_t(l)]; }
};

// A ledger time ("2026-03-01T07:00:00Z", "2026-03-01T07:00:00.5", "2026-03-01") as seconds since
// the epoch, UTC (a time without a zone is read as UTC); false when it is not one.
bool historySeconds(const std::string& at, double& seconds);

// The view's form of a timeline.
DeviceHistory deviceHistoryFromTimeline(const LedgerTimeline& timeline);

// Opens the ledger at `ledgerSpec` ("" = the default location, as `faultline ledger show` without
// --ledger) for reading and converts the timeline of `key` (a serial or UUID). Errors (no ledger
// there, no such GPU) come back in `error`. Blocking: call it on a worker.
DeviceHistory loadDeviceHistoryOnWorker(const QString& ledgerSpec, const QString& key);

}  // namespace faultline::views
