#pragma once
// Simulated defects: how faulty hardware shows in kernel outputs. A `sim:<model>` target runs the
// golden model and hands each output to its FaultModel. Everything is seeded, so a run with the
// same seed, op and repetition corrupts the same elements the same way.
//
// Models (parameters in brackets, defaults after '='):
//   healthy       no defect (a healthy peer of the defective ones)
//   flip          random single-bit flips        [rate=1e-4, bit_lo, bit_hi (default: whole word)]
//   stuck-bit     one bit forced in one lane     [bit=<dtype default>, value=1, lane=5, lanes=32]
//   sm            tiles of one virtual SM wrong  [sm=7, sms=132, tile=64, rate=0.25]
//   range         a corrupted address range      [start=<1/3 of the tensor>, length=1024, stride=0, rate=1]
//   nan           NaN or Inf written             [rate=1e-5, value=nan|inf]
//   intermittent  flip that fails k of n runs    [k=1, n=3, rate=1e-3]
//   hang          the device stops answering     [after=3 ops]
//   crash         the process dies (like Xid 79) [after=3 ops]
// Every model also takes: op=<op name> and name=<substring of module path> to confine the
// defect to some ops, k/n to make it intermittent, and seed=<n>; and library=golden|blas, the
// implementation the simulated device runs ops with (SimLibrary.h). Every model that corrupts
// outputs also takes the trigger parameters of FaultTrigger.h (run_rate, mag_lo/mag_hi, only_sm,
// inner_lo/inner_hi, only_dtype): conditions under which alone the defect fires.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "FaultTrigger.h"
#include "ReplayVocabulary.h"
#include "TargetSpec.h"

namespace faultline {

// What the simulated device is running when a fault may strike.
struct FaultContext {
    std::string op;          // trace op name (gemm, softmax, ...)
    std::string moduleName;  // the op's module path
    uint64_t opIndex = 0;    // index of the op in the trace
    uint64_t opsRun = 0;     // ops this worker process has run before this one (hang/crash)
    uint32_t repetition = 0;
    uint64_t seed = 0;
    uint32_t grid = 0;  // the op's grid=N setting (golden/ReplaySettings.h); 0: one block per tile
};

enum class FaultAction { None, Hang, Crash };

// How a run that met the action ends: Hang or Crash (None: Ok).
constexpr RunOutcome outcomeOf(FaultAction a)
{
    return a == FaultAction::Hang    ? RunOutcome::Hang
           : a == FaultAction::Crash ? RunOutcome::Crash
                                     : RunOutcome::Ok;
}

// Virtual SM assignment of a 2-D output view (last dim = columns): tiles of `tile`×`tile`
// elements in row-major tile order, tile t computed by block t (or, with a grid of N blocks that
// stride over the tiles, block t mod N), and block b by SM b mod sms — the order a one-wave grid
// launch schedules blocks.
struct VirtualSmLayout {
    uint32_t tile = 64;
    uint32_t sms = 132;
    int32_t smOfTile(uint64_t t, uint32_t grid = 0) const;
    int32_t smOfElement(uint64_t row, uint64_t col, uint64_t cols, uint32_t grid = 0) const;
    // SM id per tile, row-major over ceil(rows/tile) × ceil(cols/tile) tiles.
    std::vector<int32_t> tileMap(uint64_t rows, uint64_t cols, uint32_t grid = 0) const;
};

class FaultModel {
public:
    virtual ~FaultModel() = default;
    virtual std::string name() const = 0;
    // One line saying what this instance does, with its parameters.
    virtual std::string describe() const = 0;
    // Whether this run misbehaves before producing output (hang/crash models).
    virtual FaultAction actionBefore(const FaultContext& ctx) const;
    // Corrupts output `outputIndex` in place. Returns how many elements it changed.
    virtual uint64_t corrupt(HostTensor& out, size_t outputIndex, const FaultContext& ctx) const = 0;
    // Whether the defect applies to this op and repetition (op/name filters, k of n).
    bool applies(const FaultContext& ctx) const;
    // Corrupts the outputs of one run where the defect applies and its trigger fires (confined to
    // the tiles of the trigger's SM when it names one). Returns the elements changed.
    uint64_t inject(std::vector<HostTensor>& outputs, const FaultContext& ctx, const TraceOp* op,
                    std::span<const HostTensor> inputs) const;

    const VirtualSmLayout& smLayout() const { return m_sm; }
    const FaultTrigger& trigger() const { return m_trigger; }

protected:
    std::string m_opFilter, m_nameFilter;
    uint32_t m_failK = 1, m_failN = 1;
    uint64_t m_seed = 0;
    VirtualSmLayout m_sm;
    FaultTrigger m_trigger;
    friend Result<std::unique_ptr<FaultModel>> createFaultModel(const TargetSpec& spec);
};

// Builds the model a `sim:` target names; unknown models and bad parameters are errors.
Result<std::unique_ptr<FaultModel>> createFaultModel(const TargetSpec& spec);
// The model names createFaultModel accepts.
std::vector<std::string> faultModelNames();

// Deterministic 64-bit mixing (splitmix64), the project's one seeded hash.
uint64_t mixSeed(uint64_t a, uint64_t b);

}  // namespace faultline
