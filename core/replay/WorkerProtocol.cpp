#include "WorkerProtocol.h"

#include <chrono>
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "../io/SafetensorsWriter.h"
#include "JsonFields.h"
#include "TensorLoad.h"
#include "WorkerMessages.h"

namespace faultline {
namespace {

void reply(std::ostream& out, const nlohmann::json& j)
{
    out << j.dump() << "\n" << std::flush;
}

Status writeOutputs(const std::string& path, const ReplayOutput& r)
{
    std::vector<SafetensorsEntry> entries;
    std::vector<std::string> names;
    names.reserve(r.outputs.size());
    for (size_t i = 0; i < r.outputs.size(); ++i) {
        names.push_back("output/" + std::to_string(i));
        entries.push_back({names.back(), r.outputs[i].dtype, r.outputs[i].shape, r.outputs[i].data.data()});
    }
    std::map<std::string, std::string> metadata;
    if (!r.tileSm.empty()) {
        entries.push_back({"tile_sm", DType::Int32, {r.tileSm.size()}, r.tileSm.data()});
        metadata["sm_tile"] = std::to_string(r.smTile);
    }
    return writeSafetensors(path, entries, metadata);
}

}  // namespace

int serveWorkerRequests(std::istream& in, std::ostream& out, Target& target, const Trace& trace)
{
    WorkerHello hello;
    hello.target = target.label();
    hello.description = target.describe();
    hello.bitwiseStable = target.bitwiseStable();
    hello.peerKey = target.peerKey();
    reply(out, hello.toJson());
    std::map<size_t, const TraceOp*> ops;
    for (const TraceOp& op : trace.ops) ops[op.index] = &op;
    uint64_t opsRun = 0;
    bool cached = false;
    size_t cachedOp = 0;
    std::vector<HostTensor> cachedInputs;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        auto parsed = parseProtocolLine(line);
        auto req = parsed ? WorkerRequest::fromJson(*parsed) : Result<WorkerRequest>(parsed.error());
        if (!req) {
            std::optional<uint64_t> id;
            if (parsed && parsed->contains("id") && isJsonCount((*parsed)["id"]))
                id = (*parsed)["id"].get<uint64_t>();
            reply(out, WorkerReply::failure(id, "malformed request: " + req.message()).toJson());
            continue;
        }
        const uint64_t id = req->id;
        auto it = ops.find(req->op);
        if (it == ops.end()) {
            reply(out, WorkerReply::failure(id, "no op " + std::to_string(req->op)).toJson());
            continue;
        }
        const auto started = std::chrono::steady_clock::now();
        ReplayRequest request;
        request.op = it->second;
        request.repetition = req->rep;
        request.seed = req->seed;
        request.skipIfIdenticalTo = req->skipIfIdenticalTo;
        // The inputs of the op last run stay loaded: a campaign runs an op's repetitions in a row.
        if (!cached || cachedOp != req->op) {
            cached = false;
            cachedInputs.clear();
            auto inputs = loadOpInputs(trace, *it->second);
            if (!inputs) {
                reply(out, WorkerReply::failure(id, inputs.message()).toJson());
                continue;
            }
            cachedInputs = std::move(inputs).value();
            cachedOp = req->op;
            cached = true;
        }
        request.inputs = cachedInputs;
        auto result = target.run(request, opsRun++);
        if (!result) {
            const bool fatal = target.fatalError();
            reply(out, WorkerReply::failure(id, result.message(), fatal).toJson());
            if (fatal) return 3;
            continue;
        }
        if (result->outputOmitted) {
            // The target left out an output identical to the repetition the orchestrator holds.
            if (!mayOmitOutput(request, result->repeatCheck, result->outputs.size())) {
                reply(out,
                      WorkerReply::failure(id, "the target omitted an output it had to return").toJson());
                continue;
            }
        } else {
            Status st = writeOutputs(req->out, *result);
            if (!st) {
                reply(out, WorkerReply::failure(id, st.message()).toJson());
                continue;
            }
        }
        WorkerReply ok;
        ok.id = id;
        ok.ok = true;
        ok.outputs = result->outputs.size();
        ok.injected = result->injected;
        ok.goldenExact = result->goldenExact;
        ok.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        if (result->outputOmitted) ok.identicalToRep = result->repeatCheck->againstRep;
        ok.vsRep = result->repeatCheck;
        reply(out, ok.toJson());
    }
    return 0;
}

}  // namespace faultline
