#pragma once
// The replay vocabularies (ReplayVocabulary.h) as JSON values: each is its public name. Reading an
// unknown name throws nlohmann::json's other_error, which readers turn into a Format error naming
// the file; nothing is ever read as a default word.
#include <nlohmann/json.hpp>
#include <string>

#include "ReplayVocabulary.h"

namespace faultline {

inline void to_json(nlohmann::json& j, Verdict v)
{
    j = std::string(verdictName(v));
}

inline void from_json(const nlohmann::json& j, Verdict& v)
{
    const auto parsed = parseVerdict(j.get<std::string>());
    if (!parsed) throw nlohmann::json::other_error::create(501, "not a verdict: \"" + j.dump() + "\"", &j);
    v = *parsed;
}

}  // namespace faultline
