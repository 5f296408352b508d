#include "Target.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "../golden/OpRegistry.h"
#include "../golden/ReplaySettings.h"
#include "FaultModel.h"
#include "HostRepeatCheck.h"
#include "SimLibrary.h"

namespace faultline {
namespace {

Result<ReplayOutput> runGoldenFor(const ReplayRequest& r)
{
    if (!r.op) return Error{"replay request without an op", ErrorCode::Protocol};
    auto out = golden::runGolden(r.op->op, r.inputs, r.op->params);
    if (!out) return out.error();
    ReplayOutput result;
    result.outputs.push_back(std::move(out).value());
    result.goldenExact = true;
    return result;
}

class CpuTarget : public Target {
public:
    std::string label() const override { return "cpu"; }
    std::string describe() const override { return "CPU golden model (defined summation order)"; }
    bool bitwiseStable() const override { return true; }
    Result<ReplayOutput> run(const ReplayRequest& request, uint64_t) override
    {
        auto result = runGoldenFor(request);
        if (result) {
            result->repeatCheck = m_repeats.check(request.op->index, request.repetition, result->outputs[0]);
            result->outputOmitted = mayOmitOutput(request, result->repeatCheck, result->outputs.size());
        }
        return result;
    }

private:
    HostRepeatCheck m_repeats;
};

class SimTarget : public Target {
public:
    SimTarget(TargetSpec spec, std::unique_ptr<FaultModel> model, SimLibrary library)
        : m_spec(std::move(spec)), m_model(std::move(model)), m_library(library)
    {
    }
    std::string label() const override { return m_spec.text; }
    std::string describe() const override
    {
        return "simulated device: " + m_model->describe() + m_model->trigger().describe() +
               (m_library == SimLibrary::Blas ? "; gemm through a simulated production BLAS" : "");
    }
    bool bitwiseStable() const override { return true; }
    std::string peerKey() const override { return simLibraryPeerKey(m_library); }
    Result<ReplayOutput> run(const ReplayRequest& request, uint64_t opsRun) override
    {
        FaultContext ctx;
        ctx.op = request.op ? request.op->op : "";
        ctx.moduleName = request.op ? request.op->name : "";
        ctx.opIndex = request.op ? request.op->index : 0;
        ctx.opsRun = opsRun;
        ctx.repetition = request.repetition;
        ctx.seed = request.seed;
        if (request.op) {
            auto grid = golden::replayGrid(request.op->op, request.op->params);
            if (!grid) return grid.error();
            ctx.grid = *grid;
        }
        switch (m_model->actionBefore(ctx)) {
            case FaultAction::Hang:
                for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
            case FaultAction::Crash:
                std::fprintf(stderr,
                             "simulated device fault: GPU has fallen off the bus (like Xid 79) "
                             "while running op %llu (%s)\n",
                             static_cast<unsigned long long>(ctx.opIndex), ctx.op.c_str());
                std::fflush(stderr);
                std::abort();
            case FaultAction::None:
                break;
        }
        auto result = runGoldenFor(request);
        if (!result) return result;
        ReplayOutput& out = result.value();
        for (HostTensor& o : out.outputs) applySimLibrary(m_library, ctx.op, ctx.opIndex, o);
        out.goldenExact = simLibraryIsGoldenExact(m_library, ctx.op);
        out.injected = m_model->inject(out.outputs, ctx, request.op, request.inputs);
        if (!out.outputs.empty()) {
            const HostTensor& o = out.outputs.front();
            const uint64_t cols = o.shape.empty() ? 1 : o.shape.back();
            const uint64_t rows = cols ? o.elementCount() / cols : 0;
            out.tileSm = m_model->smLayout().tileMap(rows, cols, ctx.grid);
            out.smTile = m_model->smLayout().tile;
            out.repeatCheck = m_repeats.check(ctx.opIndex, request.repetition, o);
            out.outputOmitted = mayOmitOutput(request, out.repeatCheck, out.outputs.size());
        }
        return result;
    }

private:
    TargetSpec m_spec;
    std::unique_ptr<FaultModel> m_model;
    SimLibrary m_library = SimLibrary::Golden;
    HostRepeatCheck m_repeats;
};

std::map<std::string, TargetFactory>& factories()
{
    static std::map<std::string, TargetFactory> registered;
    return registered;
}

std::mutex& factoryMutex()
{
    static std::mutex m;
    return m;
}

}  // namespace

Result<std::unique_ptr<Target>> createTarget(const TargetSpec& spec)
{
    if (spec.kind == "cpu") return std::unique_ptr<Target>(std::make_unique<CpuTarget>());
    if (spec.kind == "sim") {
        auto model = createFaultModel(spec);
        if (!model) return model.error();
        auto library = simLibraryOf(spec);
        if (!library) return library.error();
        return std::unique_ptr<Target>(std::make_unique<SimTarget>(spec, std::move(model).value(), *library));
    }
    if (spec.kind == "cuda" && !spec.params.empty())
        return Error{"target '" + spec.text + "': " + spec.params.begin()->first +
                         " is a setting of NCCL ranks in `faultline collective`; replay takes plain cuda:N",
                     ErrorCode::Usage};
    {
        std::lock_guard lock(factoryMutex());
        const auto it = factories().find(spec.kind);
        if (it != factories().end()) return it->second(spec);
    }
    if (spec.kind == "cuda")
        return Error{
            "target '" + spec.text + "': CUDA targets run in faultline-worker built with the CUDA target",
            ErrorCode::Usage};
    return Error{"target '" + spec.text + "': unknown kind", ErrorCode::Usage};
}

void registerTargetFactory(const std::string& kind, TargetFactory factory)
{
    std::lock_guard lock(factoryMutex());
    factories()[kind] = factory;
}

}  // namespace faultline
