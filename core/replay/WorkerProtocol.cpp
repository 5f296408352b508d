#include "WorkerProtocol.h"

#include <chrono>
#include <cmath>
#include <istream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <ostream>

#include "../io/SafetensorsWriter.h"
#include "TensorLoad.h"

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
    nlohmann::json hello = {{"hello", "faultline-worker"},
                            {"protocol", kWorkerProtocolVersion},
                            {"target", target.label()},
                            {"description", target.describe()},
                            {"bitwise_stable", target.bitwiseStable()}};
    if (const std::string key = target.peerKey(); !key.empty()) hello["peer_key"] = key;
    reply(out, hello);
    std::map<size_t, const TraceOp*> ops;
    for (const TraceOp& op : trace.ops) ops[op.index] = &op;
    uint64_t opsRun = 0;
    bool cached = false;
    size_t cachedOp = 0;
    std::vector<HostTensor> cachedInputs;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        nlohmann::json req = nlohmann::json::parse(line, nullptr, false);
        if (req.is_discarded() || !req.is_object() || !req.contains("id")) {
            reply(out, {{"id", nullptr}, {"ok", false}, {"error", "malformed request"}, {"fatal", false}});
            continue;
        }
        const auto id = req.value("id", int64_t(-1));
        const size_t opIndex = req.value("op", size_t(0));
        auto it = ops.find(opIndex);
        if (it == ops.end()) {
            reply(out, {{"id", id}, {"ok", false}, {"error", "no op " + std::to_string(opIndex)}, {"fatal", false}});
            continue;
        }
        const auto started = std::chrono::steady_clock::now();
        ReplayRequest request;
        request.op = it->second;
        request.repetition = req.value("rep", uint32_t(0));
        request.seed = req.value("seed", uint64_t(0));
        if (req.contains("skip_if_identical_to") && req["skip_if_identical_to"].is_number_unsigned())
            request.skipIfIdenticalTo = req["skip_if_identical_to"].get<uint32_t>();
        // The inputs of the op last run stay loaded: a campaign runs an op's repetitions in a row.
        if (!cached || cachedOp != opIndex) {
            cached = false;
            cachedInputs.clear();
            auto inputs = loadOpInputs(trace, *it->second);
            if (!inputs) {
                reply(out, {{"id", id}, {"ok", false}, {"error", inputs.message()}, {"fatal", false}});
                continue;
            }
            cachedInputs = std::move(inputs).value();
            cachedOp = opIndex;
            cached = true;
        }
        request.inputs = cachedInputs;
        auto result = target.run(request, opsRun++);
        if (!result) {
            const bool fatal = target.fatalError();
            reply(out, {{"id", id}, {"ok", false}, {"error", result.message()}, {"fatal", fatal}});
            if (fatal) return 3;
            continue;
        }
        if (result->outputOmitted) {
            // The target left out an output identical to the repetition the orchestrator holds.
            if (!mayOmitOutput(request, result->repeatCheck, result->outputs.size())) {
                reply(out, {{"id", id}, {"ok", false}, {"error", "the target omitted an output it had to return"},
                            {"fatal", false}});
                continue;
            }
        } else {
            Status st = writeOutputs(req.value("out", std::string()), *result);
            if (!st) {
                reply(out, {{"id", id}, {"ok", false}, {"error", st.message()}, {"fatal", false}});
                continue;
            }
        }
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        nlohmann::json ok = {{"id", id},
                             {"ok", true},
                             {"outputs", result->outputs.size()},
                             {"injected", result->injected},
                             {"golden_exact", result->goldenExact},
                             {"ms", ms}};
        if (result->outputOmitted) ok["identical_to_rep"] = result->repeatCheck->againstRep;
        if (const auto& rc = result->repeatCheck) {
            ok["vs_rep"] = {{"rep", rc->againstRep},
                            {"mismatched", rc->mismatched},
                            {"flipped_bits", rc->flippedBits},
                            {"worst_tile", rc->worstTile},
                            {"tile", rc->tile}};
            // JSON has no infinity: a NaN difference is written as null.
            ok["vs_rep"]["max_abs_error"] = std::isfinite(rc->maxAbsError) ? nlohmann::json(rc->maxAbsError) : nlohmann::json();
        }
        reply(out, ok);
    }
    return 0;
}

}  // namespace faultline
