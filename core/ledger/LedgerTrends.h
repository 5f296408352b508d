#pragma once
// Trends in one GPU's history (`faultline ledger show`): its failure rate over time (the runs and
// failures of its campaigns summed per calendar window, overall and per op, each with a Wilson 95%
// interval) and how its ECC and row-remap counters grew across its health snapshots (first, last,
// delta, per day). Pure functions of the timeline's entries, so both engines give the same trends.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../replay/Statistics.h"

namespace faultline {

struct TimelineEntry;

enum class TrendWindow { Week, Month };

// "week" / "month"; nullopt for another word.
std::optional<TrendWindow> parseTrendWindow(const std::string& word);
std::string nameOf(TrendWindow w);

// The window `at` (ISO 8601 with a date) falls in: [start, end) as dates "YYYY-MM-DD" (weeks
// start on Monday) and its label ("2026-03" for a month, the Monday "2026-03-02" for a week);
// nullopt when `at` has no date.
struct TrendWindowSpan {
    std::string label, start, end;
};
std::optional<TrendWindowSpan> trendWindowOf(const std::string& at, TrendWindow w);

struct TrendOpRate {
    std::string op, name;
    uint64_t runs = 0, failures = 0;
    RateInterval rate;
};

struct TrendRate {
    TrendWindowSpan window;
    uint64_t campaigns = 0, runs = 0, failures = 0;
    RateInterval rate;
    std::vector<TrendOpRate> ops;  // in order of first appearance
};

struct CounterPoint {
    std::string at;
    int64_t value = 0;
};

// One counter across the snapshots that report it, in time order.
struct CounterGrowth {
    std::string counter;  // as the timeline's health entries name it (ecc_corrected_aggregate, ...)
    uint64_t snapshots = 0;
    CounterPoint first, last;
    int64_t delta = 0;
    std::optional<double> days, perDay;  // perDay unknown when first and last are at the same time
};

struct LedgerTrends {
    TrendWindow window = TrendWindow::Month;
    std::vector<TrendRate> failureRate;   // windows in time order, only those with a campaign
    std::vector<CounterGrowth> counters;  // only counters some snapshot reported
};

// The counters whose growth is followed, in the order they are reported.
const std::vector<std::string>& trendCounterNames();

// The trends of `entries` (a timeline's, in time order).
LedgerTrends ledgerTrends(const std::vector<TimelineEntry>& entries, TrendWindow window);

nlohmann::json ledgerTrendsJson(const LedgerTrends& t);
// Lines for `ledger show`, each starting "trend: " or "counter: ".
std::string ledgerTrendsText(const LedgerTrends& t);

}  // namespace faultline
