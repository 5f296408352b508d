#pragma once
// A replay target: somewhere an op can run again. `cpu` (the golden model), `sim:<model>` (the
// golden model with a simulated defect) and `cuda:<index>` implement this one interface; views
// and the campaign never see a concrete target. Every target is created in one place,
// createTarget (Target.cpp): `cpu` and `sim:` directly, kinds built outside core (`cuda:` in
// kernels/) through the factory their executable registers (registerTargetFactory).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "../trace/Trace.h"
#include "TargetSpec.h"

namespace faultline {

struct ReplayRequest {
    const TraceOp* op = nullptr;         // the op to run (its name and parameters)
    std::span<const HostTensor> inputs;  // its inputs, in order (valid during the call)
    uint32_t repetition = 0;
    uint64_t seed = 0;  // campaign seed: same seed, same simulated faults
    // The orchestrator holds this repetition's outputs of the op: an output found bitwise
    // identical to it need not be fetched (see mayOmitOutput).
    std::optional<uint32_t> skipIfIdenticalTo;
};

// A bitwise comparison of output 0 with an earlier repetition's output 0 of the same op, made
// where both live (a cuda target keeps its first repetition on the device): the question the
// orchestrator's digest comparison asks, answered without moving the reference. NaNs count as
// their bits, as in the digests.
struct RepeatCheck {
    uint32_t againstRep = 0;
    uint64_t mismatched = 0;   // elements whose bits differ
    uint64_t flippedBits = 0;  // sum of popcount(bits ^ bits)
    double maxAbsError = 0;    // +inf where a NaN differs
    uint32_t tile = 0;         // edge of the tiles below, over the 2-D view of output 0
    int64_t worstTile = -1;    // row-major index of the tile with the largest error; -1: none
};

struct ReplayOutput {
    std::vector<HostTensor> outputs;
    // SM that computed each output tile (row-major tiles of smTile × smTile over the 2-D view
    // of output 0), when the target records it; empty otherwise.
    std::vector<int32_t> tileSm;
    uint32_t smTile = 0;
    uint64_t injected = 0;  // sim targets: elements the simulated defect changed
    std::optional<RepeatCheck> repeatCheck;
    // True when this output is defined to be the golden model's, bit for bit (the cpu target,
    // sim targets on the golden library, the golden CUDA kernels): the orchestrator then judges
    // it by bits (GoldenExact.h). False for production libraries (cuBLAS, cuBLASLt, NCCL), whose
    // outputs are judged against the golden model within the op's bound and bitwise against peers.
    bool goldenExact = false;
    // Output 0's bytes were not fetched (mayOmitOutput held): outputs[0] keeps its dtype and shape,
    // its data may be empty, and the worker answers "identical_to_rep" instead of writing it.
    bool outputOmitted = false;
};

// Whether a target may leave its output out: a single output whose repetition check found it
// bitwise identical to the repetition the orchestrator offered.
inline bool mayOmitOutput(const ReplayRequest& request, const std::optional<RepeatCheck>& check,
                          size_t outputs)
{
    return outputs == 1 && check && check->mismatched == 0 && request.skipIfIdenticalTo &&
           *request.skipIfIdenticalTo == check->againstRep;
}

class Target {
public:
    virtual ~Target() = default;
    // The spec it was made from, normalised ("cpu", "sim:stuck-bit:bit=20", "cuda:0").
    virtual std::string label() const = 0;
    // One line for reports: what the target is (device name, fault model and parameters).
    virtual std::string describe() const = 0;
    // True when repeated runs of the same op on a healthy instance must give identical bits
    // (the golden model, deterministic kernels); campaigns then certify determinism.
    virtual bool bitwiseStable() const = 0;
    // Targets with the same non-empty peer key run the same kernels on the same hardware with the
    // same libraries (for a GPU: SKU, SM count, compute capability, driver, CUDA runtime, cuBLAS
    // and NCCL versions), so their outputs of an op must be bitwise identical even where they are
    // not the golden model's: a campaign compares such peers bit for bit. Empty: no peers.
    virtual std::string peerKey() const { return {}; }
    // Runs one op. May block forever or end the process when the target simulates (or is) a
    // defective device: callers run targets inside faultline-worker processes with a watchdog.
    // `opsRun` counts the ops this process ran before.
    virtual Result<ReplayOutput> run(const ReplayRequest& request, uint64_t opsRun) = 0;
    // True once a run() error has poisoned the target (a sticky CUDA error: illegal address,
    // launch failure, uncorrectable ECC): the worker reports it as fatal and exits so the
    // orchestrator starts a fresh process.
    virtual bool fatalError() const { return false; }
};

// Creates the target `spec` names. A kind with no factory registered (cuda in a process that
// did not register kernels/' factory, or a build without the CUDA target) is an error saying so.
Result<std::unique_ptr<Target>> createTarget(const TargetSpec& spec);

// Makes targets of one kind that lives outside core.
using TargetFactory = Result<std::unique_ptr<Target>> (*)(const TargetSpec& spec);
// From now on createTarget makes targets of `kind` ("cuda") with `factory`. faultline-worker
// registers kernels/' createCudaTarget at start; thread-safe.
void registerTargetFactory(const std::string& kind, TargetFactory factory);

}  // namespace faultline
