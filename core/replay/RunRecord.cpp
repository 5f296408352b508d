// RunRecord's JSON form: a journal line and an entry of the report's "runs".
#include <limits>
#include <nlohmann/json.hpp>

#include "BitwiseEvidence.h"
#include "JsonFields.h"
#include "RunRecord.h"

namespace faultline {

nlohmann::json RunRecord::toJson() const
{
    nlohmann::json j = {{"target", target},     {"op_index", opIndex},        {"op", op}, {"name", name},
                        {"rep", rep},           {"outcome", nameOf(outcome)}, {"ms", ms}, {"digest", digest},
                        {"injected", injected}, {"golden_exact", goldenExact}};
    if (!peerKey.empty()) j["peer_key"] = peerKey;
    if (!vsGolden.is_null()) j["vs_golden"] = vsGolden;
    if (!vsRecorded.is_null()) j["vs_recorded"] = vsRecorded;
    if (!vsRep.is_null()) j["vs_rep"] = vsRep;
    if (!hostCopy) j["host_copy"] = false;
    if (!vsPeers.is_null()) j["vs_peers"] = vsPeers;
    if (!error.empty()) j["error"] = error;
    if (deviceFault) j["device_fault"] = true;
    if (setupError) j["setup_error"] = true;
    if (!stderrTail.empty()) j["stderr"] = stderrTail;
    if (smMap.valid()) j["tile_sm"] = smMap.toJson();
    return j;
}

Result<RunRecord> RunRecord::fromJson(const nlohmann::json& j)
{
    if (!j.is_object() || !j.contains("target") || !j.contains("op_index") || !j.contains("rep") ||
        !j.contains("outcome"))
        return Error{"not a run record", ErrorCode::Format};
    // Numbers are checked before they are converted (JsonFields.h); other wrong types throw below.
    for (const char* key : {"op_index", "rep", "injected"})
        if (j.contains(key) && !isJsonCount(j[key]))
            return Error{std::string("bad run record: ") + key + " is not a count", ErrorCode::Format};
    if (j["rep"].get<uint64_t>() > std::numeric_limits<uint32_t>::max())
        return Error{"bad run record: rep is too large", ErrorCode::Format};
    if (j.contains("ms") && !j["ms"].is_number())
        return Error{"bad run record: ms is not a number", ErrorCode::Format};
    if (j.contains("vs_golden")) {
        // What the summary reads of it: max_ulp (a count) and signature (text).
        const nlohmann::json& g = j["vs_golden"];
        if (!g.is_object() || (g.contains("max_ulp") && !isJsonCount(g["max_ulp"])) ||
            (g.contains("signature") && !g["signature"].is_string()))
            return Error{"bad run record: vs_golden is not a judgement", ErrorCode::Format};
    }
    try {
        RunRecord r;
        r.target = j.at("target").get<std::string>();
        r.opIndex = j.at("op_index").get<size_t>();
        r.op = j.value("op", std::string());
        r.name = j.value("name", std::string());
        r.rep = j.at("rep").get<uint32_t>();
        const auto outcome = parseRunOutcome(j.at("outcome").get<std::string>());
        if (!outcome)
            return Error{"bad run record: unknown outcome '" + j.at("outcome").get<std::string>() + "'",
                         ErrorCode::Format};
        r.outcome = *outcome;
        r.ms = j.value("ms", 0.0);
        r.digest = j.value("digest", std::string());
        r.injected = j.value("injected", uint64_t(0));
        r.goldenExact = j.value("golden_exact", false);
        r.peerKey = j.value("peer_key", std::string());
        r.hostCopy = j.value("host_copy", true);
        if (j.contains("vs_golden")) r.vsGolden = j["vs_golden"];
        if (j.contains("vs_recorded")) r.vsRecorded = j["vs_recorded"];
        if (j.contains("vs_rep")) {
            if (!isRepeatCheckJson(j["vs_rep"]))
                return Error{"bad run record: vs_rep is not a repetition check", ErrorCode::Format};
            r.vsRep = j["vs_rep"];
        }
        if (j.contains("vs_peers") && j["vs_peers"].is_object()) r.vsPeers = j["vs_peers"];
        r.error = j.value("error", std::string());
        r.deviceFault = j.value("device_fault", false);
        r.setupError = j.value("setup_error", false);
        r.stderrTail = j.value("stderr", std::string());
        if (j.contains("tile_sm")) {
            auto map = TileSmMap::fromJson(j["tile_sm"]);
            if (!map) return map.error();
            r.smMap = std::move(map).value();
        }
        return r;
    } catch (const nlohmann::json::exception& e) {
        return Error{std::string("bad run record: ") + e.what(), ErrorCode::Format};
    }
}

}  // namespace faultline
