#pragma once
// The failure rate by condition of an explore report (`faultline explore --json` / `--out`,
// docs/formats.md): one point per condition and target, with its interval, whether the defect
// fired there or what the clean runs rule out, and the kind of condition it belongs to (scale,
// block by dimension, dtype, placement). The GUI's rate chart and the results tables both read
// it from here. The report comes from another machine: nothing in it is trusted, a wrong type is
// an error naming the file, never a throw. No Qt.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

struct ConditionRate {
    size_t condition = 0;  // index into RateByCondition::conditions
    std::string target;
    bool replayable = true;  // false: the golden model refused the condition (no runs)
    uint64_t runs = 0, failures = 0;
    double rate = 0, low = 0, high = 0;  // the interval at the report's confidence
    double rateBelow = 0;                // no failure: what the runs rule out (one-sided), else 0
    bool fired() const { return failures > 0; }
};

struct ExploreConditionInfo {
    std::string vary, axis, label;
    std::string kind;  // what the chart groups by: "scale", "block k", "block rows", "dtype", ...
    double maxAbs = 0;
    bool recorded = false;
};

struct ConditionKindGroup {
    std::string kind;
    size_t first = 0, count = 0;  // conditions [first, first + count), contiguous
};

struct RateByCondition {
    std::string op;  // "op 2 gemm (blocks.0.mlp)"
    double confidence = 0.95;
    uint64_t runsPerCondition = 0;
    std::vector<std::string> targets;
    std::vector<ExploreConditionInfo> conditions;  // as the report orders them (grouped by kind)
    std::vector<ConditionKindGroup> groups;        // runs of one kind in condition order
    std::vector<ConditionRate> rates;              // condition order, then target order
    std::vector<std::string> findings;             // "TARGET, KIND: fired for largest |x| 20 to 40; ..."
    std::vector<std::string> warnings;
    bool cancelled = false;
};

// "scale", "block k", "dtype", "placement": a block condition's kind names its dimension.
std::string conditionKindOf(const std::string& vary, const std::string& axis);

// Errors (naming `path`): no conditions or cells array, a cell naming a condition that is not
// there, a count or rate of the wrong type.
Result<RateByCondition> rateByCondition(const nlohmann::json& report, const std::string& path);

}  // namespace faultline
