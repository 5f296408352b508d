#pragma once
// When an adaptive campaign stops repeating an op on a target (`replay --until-rate RATE
// [--confidence C] [--budget DURATION]`): at the first failure; when no failure in N runs puts
// the upper confidence bound of the failure rate (cleanRateBound, Statistics.h) below RATE;
// or when the time budget is spent. A fixed campaign (--reps) has no rule.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "../Result.h"
#include "ReplayVocabulary.h"

namespace faultline {

struct StoppingRule {
    double untilRate = 0;  // 0: not adaptive (a fixed number of repetitions)
    double confidence = 0.95;
    // The campaign's wall-clock budget; 0: none. Each target shares what is left equally among
    // the ops it has not finished: an op that stops early leaves its time to the next.
    std::chrono::milliseconds budget{0};
    // In-process callers that measure a rate until their own rule decides it (shrink, explore:
    // RateProbe.h): stop once it returns true for the runs and failures so far, instead of the
    // rate rule. Never in a journal or results file.
    std::function<bool(uint64_t runs, uint64_t failures)> until;

    bool adaptive() const { return untilRate > 0 || bool(until); }
};

// RATE in [1e-7, 0.5], confidence in [0.5, 0.999999], budget not negative; errors say which
// option is wrong (ErrorCode::Usage).
Status checkStoppingRule(const StoppingRule& rule);

// The fewest clean runs whose upper confidence bound falls below `rate`: the smallest N with
// 1 - (1 - confidence)^(1/N) < rate.
uint64_t runsToRuleOut(double rate, double confidence);

// Whether the runs so far of one op on one target reach the rule: a failure, or a clean bound
// below the rate. (The budget is the caller's clock.)
bool stopReached(uint64_t runs, uint64_t failures, const StoppingRule& rule);

// What ended the runs of one op on one target once they stopped: a failure, the rate, else the
// budget (or the cancellation, when the campaign was cancelled).
StoppedBy stoppedBy(uint64_t runs, uint64_t failures, const StoppingRule& rule, bool cancelled);

// A rate as `--until-rate` takes it: a number, plain or with an exponent ("1e-3", "0.001"), or a
// percentage ("0.1%"). Errors name the option and the text; the range is checkStoppingRule's.
Result<double> parseRate(std::string_view text, std::string_view option = "--until-rate");

// A duration as `--budget` takes it: a number with a unit, s, m or h ("90s", "10m", "1.5h"); a
// bare number is seconds. Errors name the text.
Result<std::chrono::milliseconds> parseDuration(std::string_view text);
// "1e-3" for 0.001, "0.05" for 0.05: the rate as a user writes it.
std::string rateNumberText(double rate);
// "95%", "99.9%".
std::string confidenceText(double confidence);

}  // namespace faultline
