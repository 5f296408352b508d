#pragma once
// Where a replay runs, as the user writes it: "cpu", "sim:<model>[:k=v,k=v]", "cuda:<index>".
#include <map>
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

struct TargetSpec {
    std::string text;   // as given, normalised ("sim:stuck-bit:bit=20,value=1")
    std::string kind;   // cpu | sim | cuda
    std::string model;  // sim: the fault model name; cuda: the device index
    std::map<std::string, std::string> params;

    std::string param(const std::string& key, const std::string& fallback) const;
    // Parameter `key` as a number in [lo, hi] (an integer unless `real`), `fallback` when it is
    // not given. Errors: "target 'T': parameter K=V is not a number", "target 'T': K must be an
    // integer in [lo, hi], not V". A value a model cannot use is never clamped or ignored.
    Result<double> number(const std::string& key, double fallback, double lo, double hi, bool real) const;
};

// Parses one target; errors say what is wrong and list what is accepted.
Result<TargetSpec> parseTargetSpec(const std::string& text);
// Parses a comma-separated list ("cpu,sim:stuck-bit:bit=20,lane=3,sim:nan"): a piece that holds
// "k=v" and does not start a target belongs to the sim target before it (parameters may also be
// joined with '+').
Result<std::vector<TargetSpec>> parseTargetList(const std::string& text);

}  // namespace faultline
