#include "WorkerMessages.h"

#include <cmath>
#include <limits>

#include "JsonFields.h"

namespace faultline {
namespace {

Error protocolError(const std::string& what)
{
    return Error{what, ErrorCode::Protocol};
}

// Reads optional field `key` of `j` into `out` when it has the right type; false when present
// with another type.
bool readCount(const nlohmann::json& j, const char* key, uint64_t& out)
{
    if (!j.contains(key)) return true;
    if (!isJsonCount(j[key])) return false;
    out = j[key].get<uint64_t>();
    return true;
}

bool readRep(const nlohmann::json& j, const char* key, std::optional<uint32_t>& out)
{
    if (!j.contains(key) || j[key].is_null()) return true;
    if (!isJsonCount(j[key]) || j[key].get<uint64_t>() > std::numeric_limits<uint32_t>::max()) return false;
    out = j[key].get<uint32_t>();
    return true;
}

bool readString(const nlohmann::json& j, const char* key, std::string& out)
{
    if (!j.contains(key)) return true;
    if (!j[key].is_string()) return false;
    out = j[key].get<std::string>();
    return true;
}

bool readBool(const nlohmann::json& j, const char* key, bool& out)
{
    if (!j.contains(key)) return true;
    if (!j[key].is_boolean()) return false;
    out = j[key].get<bool>();
    return true;
}

}  // namespace

nlohmann::json WorkerHello::toJson() const
{
    nlohmann::json j = {{"hello", "faultline-worker"},
                        {"protocol", protocol},
                        {"target", target},
                        {"description", description},
                        {"bitwise_stable", bitwiseStable}};
    if (!peerKey.empty()) j["peer_key"] = peerKey;
    return j;
}

Result<WorkerHello> WorkerHello::fromJson(const nlohmann::json& j)
{
    if (!j.is_object() || !j.contains("hello")) return protocolError("the first line is not a hello");
    WorkerHello h;
    if (!j.contains("protocol") || !isJsonInt32(j["protocol"]))
        return protocolError("hello without a protocol version");
    h.protocol = j["protocol"].get<int>();
    if (!readString(j, "target", h.target) || !readString(j, "description", h.description) ||
        !readBool(j, "bitwise_stable", h.bitwiseStable) || !readString(j, "peer_key", h.peerKey))
        return protocolError("hello with a field of the wrong type");
    return h;
}

nlohmann::json WorkerRequest::toJson() const
{
    nlohmann::json j = {{"id", id}, {"op", op}, {"rep", rep}, {"seed", seed}, {"out", out}};
    if (skipIfIdenticalTo) j["skip_if_identical_to"] = *skipIfIdenticalTo;
    return j;
}

Result<WorkerRequest> WorkerRequest::fromJson(const nlohmann::json& j)
{
    if (!j.is_object() || !j.contains("id") || !isJsonCount(j["id"]))
        return protocolError("request without an id");
    WorkerRequest r;
    r.id = j["id"].get<uint64_t>();
    uint64_t op = 0;
    std::optional<uint32_t> rep;
    if (!j.contains("op") || !readCount(j, "op", op)) return protocolError("request without an op index");
    r.op = size_t(op);
    if (!readRep(j, "rep", rep) || !readCount(j, "seed", r.seed) || !readString(j, "out", r.out) ||
        !readRep(j, "skip_if_identical_to", r.skipIfIdenticalTo))
        return protocolError("request with a field of the wrong type");
    r.rep = rep.value_or(0);
    return r;
}

WorkerReply WorkerReply::failure(std::optional<uint64_t> id, std::string error, bool fatal)
{
    WorkerReply r;
    r.id = id;
    r.error = std::move(error);
    r.fatal = fatal;
    return r;
}

nlohmann::json WorkerReply::toJson() const
{
    nlohmann::json j = {{"id", id ? nlohmann::json(*id) : nlohmann::json()}, {"ok", ok}};
    if (!ok) {
        j["error"] = error;
        j["fatal"] = fatal;
        return j;
    }
    j["outputs"] = outputs;
    j["injected"] = injected;
    j["golden_exact"] = goldenExact;
    j["ms"] = ms;
    if (identicalToRep) j["identical_to_rep"] = *identicalToRep;
    if (vsRep) j["vs_rep"] = repeatCheckJson(*vsRep);
    return j;
}

Result<WorkerReply> WorkerReply::fromJson(const nlohmann::json& j)
{
    if (!j.is_object()) return protocolError("a reply is not a JSON object");
    WorkerReply r;
    if (j.contains("id") && !j["id"].is_null()) {
        if (!isJsonCount(j["id"])) return protocolError("reply id is not a count");
        r.id = j["id"].get<uint64_t>();
    }
    if (!readBool(j, "ok", r.ok)) return protocolError("reply field ok is not a boolean");
    if (!r.ok) {
        r.error = "worker error";
        if (!readString(j, "error", r.error) || !readBool(j, "fatal", r.fatal))
            return protocolError("failure reply with a field of the wrong type");
        return r;
    }
    uint64_t outputs = 1;
    if (!readCount(j, "outputs", outputs) || !readCount(j, "injected", r.injected) ||
        !readBool(j, "golden_exact", r.goldenExact) || !readRep(j, "identical_to_rep", r.identicalToRep))
        return protocolError("reply with a field of the wrong type");
    r.outputs = size_t(outputs);
    if (j.contains("ms")) {
        if (!j["ms"].is_number()) return protocolError("reply field ms is not a number");
        r.ms = j["ms"].get<double>();
    }
    if (j.contains("vs_rep")) {
        auto check = repeatCheckFromJson(j["vs_rep"]);
        if (!check) return protocolError("vs_rep is not a repetition check");
        r.vsRep = *check;
    }
    return r;
}

nlohmann::json repeatCheckJson(const RepeatCheck& c)
{
    nlohmann::json j = {{"rep", c.againstRep},
                        {"mismatched", c.mismatched},
                        {"flipped_bits", c.flippedBits},
                        {"worst_tile", c.worstTile},
                        {"tile", c.tile}};
    j["max_abs_error"] = std::isfinite(c.maxAbsError) ? nlohmann::json(c.maxAbsError) : nlohmann::json();
    return j;
}

Result<RepeatCheck> repeatCheckFromJson(const nlohmann::json& j)
{
    if (!j.is_object()) return protocolError("a repetition check is not an object");
    RepeatCheck c;
    std::optional<uint32_t> rep, tile;
    if (!readRep(j, "rep", rep) || !readCount(j, "mismatched", c.mismatched) ||
        !readCount(j, "flipped_bits", c.flippedBits) || !readRep(j, "tile", tile))
        return protocolError("a repetition check with a field of the wrong type");
    c.againstRep = rep.value_or(0);
    c.tile = tile.value_or(0);
    if (j.contains("worst_tile")) {
        const auto& w = j["worst_tile"];
        if (!w.is_number_integer() && !w.is_number_unsigned())
            return protocolError("worst_tile is not an integer");
        if (w.is_number_unsigned() && w.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
            return protocolError("worst_tile is out of range");
        c.worstTile = w.get<int64_t>();
    }
    if (j.contains("max_abs_error")) {
        const auto& m = j["max_abs_error"];
        if (m.is_null())
            c.maxAbsError = std::numeric_limits<double>::infinity();
        else if (m.is_number())
            c.maxAbsError = m.get<double>();
        else
            return protocolError("max_abs_error is not a number");
    }
    return c;
}

Result<nlohmann::json> parseProtocolLine(const std::string& line)
{
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return protocolError("not a JSON object: " + line.substr(0, 200));
    return j;
}

}  // namespace faultline
