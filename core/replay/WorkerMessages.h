#pragma once
// The faultline-worker protocol's messages as types, with the one JSON mapping that both sides
// use: the worker (WorkerProtocol.cpp) writes hellos and replies and reads requests; the
// orchestrator (TargetRunner.cpp) writes requests and reads hellos and replies. JSON lines over
// the worker's stdin/stdout; docs/formats.md "Worker protocol v1" lists the fields.
//
//   hello    {"hello":"faultline-worker","protocol":1,"target":LABEL,"description":TEXT,
//             "bitwise_stable":BOOL[,"peer_key":TEXT]}  (the worker's first line; Target::peerKey)
//   request  {"id":N,"op":INDEX,"rep":R,"seed":S,"out":"PATH.safetensors"[,"skip_if_identical_to":R0]}
//   reply    {"id":N,"ok":true,"outputs":K,"injected":E,"golden_exact":BOOL,"ms":T
//             [,"identical_to_rep":R0][,"vs_rep":{"rep","mismatched","flipped_bits","max_abs_error","tile","worst_tile"}]}
//            {"id":N|null,"ok":false,"error":TEXT,"fatal":BOOL}
//
// Parsing checks every field's type and range before converting it (JsonFields.h); anything
// else is an Error with code Protocol naming the field.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "../Result.h"
#include "Target.h"

namespace faultline {

// Bump when a message changes meaning; the orchestrator refuses a worker that speaks another.
inline constexpr int kWorkerProtocolVersion = 1;

struct WorkerHello {
    int protocol = kWorkerProtocolVersion;
    std::string target;       // Target::label
    std::string description;  // Target::describe
    bool bitwiseStable = true;
    std::string peerKey;  // "" = no peers

    nlohmann::json toJson() const;
    static Result<WorkerHello> fromJson(const nlohmann::json& j);
};

struct WorkerRequest {
    uint64_t id = 0;
    size_t op = 0;  // trace op index
    uint32_t rep = 0;
    uint64_t seed = 0;
    std::string out;  // where the worker writes the outputs (safetensors)
    // The orchestrator holds this repetition's outputs: a single output the target finds bitwise
    // identical to it is not written (the reply says identical_to_rep).
    std::optional<uint32_t> skipIfIdenticalTo;

    nlohmann::json toJson() const;
    static Result<WorkerRequest> fromJson(const nlohmann::json& j);
};

struct WorkerReply {
    std::optional<uint64_t> id;  // none when the request could not be read
    bool ok = false;
    // ok:
    size_t outputs = 0;
    uint64_t injected = 0;
    bool goldenExact = false;
    double ms = 0;
    std::optional<uint32_t> identicalToRep;
    std::optional<RepeatCheck> vsRep;
    // not ok:
    std::string error;
    bool fatal = false;  // a sticky device error: the worker exits after this reply

    static WorkerReply failure(std::optional<uint64_t> id, std::string error, bool fatal = false);
    nlohmann::json toJson() const;
    static Result<WorkerReply> fromJson(const nlohmann::json& j);
};

// A repetition check's JSON (the reply's and the run record's vs_rep): max_abs_error is null
// where a NaN differed (JSON has no infinity).
nlohmann::json repeatCheckJson(const RepeatCheck& check);
Result<RepeatCheck> repeatCheckFromJson(const nlohmann::json& j);

// Parses one line of the protocol into a JSON object (a Protocol error otherwise).
Result<nlohmann::json> parseProtocolLine(const std::string& line);

}  // namespace faultline
