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
};

// Parses one target; errors say what is wrong and list what is accepted.
Result<TargetSpec> parseTargetSpec(const std::string& text);
// Parses a comma-separated list ("cpu,sim:stuck-bit:bit=20,lane=3,sim:nan"): a piece that holds
// "k=v" and does not start a target belongs to the sim target before it (parameters may also be
// joined with '+').
Result<std::vector<TargetSpec>> parseTargetList(const std::string& text);

}  // namespace faultline
