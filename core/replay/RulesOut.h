#pragma once
// What a clean result rules out, as the JSON field `rules_out` reads everywhere (campaign targets,
// adaptive op cells, fleet GPUs): {rate_below, confidence} where none of `runs` runs failed (the
// one-sided bound of Statistics.h's cleanRateBound), null where a run failed or none ran.
#include <cstdint>
#include <nlohmann/json.hpp>

#include "Statistics.h"

namespace faultline {

inline nlohmann::json rulesOutJson(uint64_t failures, uint64_t runs, double confidence = 0.95)
{
    if (failures > 0 || runs == 0) return nlohmann::json();
    return {{"rate_below", cleanRateBound(runs, confidence)}, {"confidence", confidence}};
}

}  // namespace faultline
