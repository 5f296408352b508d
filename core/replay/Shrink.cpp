#include "Shrink.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "../io/ScratchDirectory.h"
#include "InputCuts.h"
#include "OneOpTrace.h"
#include "TensorLoad.h"

namespace faultline {
namespace {

using Clock = std::chrono::steady_clock;

ShrinkSide sideOf(const TraceOp& op, const std::vector<HostTensor>& inputs)
{
    ShrinkSide s;
    for (size_t i = 0; i < inputs.size(); ++i)
        s.inputs.emplace_back(i < op.inputs.size() ? op.inputs[i] : std::string(), inputs[i].shape);
    s.elements = inputElementCount(op, inputs);
    // Zeros counted like elements: each tensor once.
    std::map<std::string, uint64_t> zeros;
    for (size_t i = 0; i < inputs.size() && i < op.inputs.size(); ++i)
        zeros[op.inputs[i]] = zeroElementCount(inputs[i]);
    for (const auto& [id, n] : zeros) s.zeroElements += n;
    return s;
}

// The chunk [first, last) of `size` indices cut into n.
std::pair<uint64_t, uint64_t> chunk(uint64_t size, uint64_t n, uint64_t i)
{
    return {i * size / n, (i + 1) * size / n};
}

// The delta debugging of one op's inputs on one target against the original's interval.
class Search {
public:
    Search(const ShrinkOptions& o, const Trace& trace, const TraceOp& op, std::vector<HostTensor> inputs,
           const RateMeasure& original, const std::string& scratch, Clock::time_point deadline,
           ShrinkReport& report)
        : m_o(o),
          m_trace(trace),
          m_op(op),
          m_inputs(std::move(inputs)),
          m_original(original),
          m_scratch(scratch),
          m_deadline(deadline),
          m_report(report)
    {
    }

    Status run()
    {
        const std::vector<InputAxis> axes = inputAxes(m_op, m_inputs);
        // Cuts on one axis can make another cut possible (a smaller k lets the rows go): passes
        // over every axis until one changes nothing.
        for (int pass = 0; pass < 4 && !m_stop; ++pass) {
            bool progress = false;
            for (const InputAxis& axis : axes) {
                auto cut = cutAxis(axis);
                if (!cut) return cut.error();
                progress = progress || *cut;
            }
            if (!progress) break;
        }
        for (size_t i = 0; i < m_inputs.size() && !m_stop; ++i)
            if (Status st = zeroParts(i); !st) return st;
        return {};
    }

    const std::vector<HostTensor>& inputs() const { return m_inputs; }
    const TraceOp& op() const { return m_op; }

private:
    // Replays a candidate; true when it fails at a rate inside the original interval.
    Result<bool> tryCandidate(const std::vector<HostTensor>& inputs, const TraceOp& op)
    {
        if (m_stop) return false;
        if (m_o.setup.cancel && m_o.setup.cancel->load()) return halt(ShrinkEnd::Cancelled);
        std::chrono::milliseconds left{0};
        if (m_deadline != Clock::time_point::max()) {
            left = std::chrono::duration_cast<std::chrono::milliseconds>(m_deadline - Clock::now());
            if (left.count() <= 0) return halt(ShrinkEnd::Budget);
        }
        const std::string path = m_scratch + "/candidate-" + std::to_string(++m_report.candidates) + ".h5";
        if (Status st = writeOneOpTrace(m_trace, op, inputs, path); !st) return st.error();
        RateProbeSetup setup = m_o.setup;
        setup.scratchDir = m_scratch;
        auto m = measureOpRate(path, op.index, m_o.target,
                               insideIntervalRule(m_original.interval, m_original.runs, m_o.confidence),
                               m_o.confidence, left, setup);
        std::error_code ec;
        std::filesystem::remove(path, ec);
        if (!m) return m.error();
        if (m->replayable && !m->decided)
            return halt(m_o.setup.cancel && m_o.setup.cancel->load() ? ShrinkEnd::Cancelled
                                                                     : ShrinkEnd::Budget);
        return reproducesInside(*m, m_original.interval) ? (m_last = *m, true) : false;
    }

    bool halt(ShrinkEnd end)
    {
        m_stop = true;
        m_report.end = end;
        return false;
    }

    void accept(std::vector<HostTensor> inputs, const TraceOp& op, std::string what)
    {
        m_inputs = std::move(inputs);
        m_op = op;
        m_report.steps.push_back(
            {std::move(what), inputElementCount(m_op, m_inputs), m_last.runs, m_last.failures});
    }

    // ddmin on one axis with contiguous chunks: keep one chunk, else the rest without one, else
    // finer chunks. True when the axis got smaller.
    Result<bool> cutAxis(const InputAxis& axis)
    {
        bool progress = false;
        uint64_t n = 2;
        TraceOp op = m_op;
        dropLayoutParams(op);
        while (!m_stop) {
            const uint64_t size = axisSize(axis, m_inputs);
            if (size < 2) break;
            n = std::min(n, size);
            bool found = false;
            for (int complement = 0; complement < 2 && !found; ++complement) {
                if (complement && n == 2) break;  // the rest without one of two chunks is the other
                for (uint64_t i = 0; i < n && !found && !m_stop; ++i) {
                    const auto [first, last] = chunk(size, n, i);
                    std::vector<uint64_t> keep;
                    for (uint64_t j = 0; j < size; ++j)
                        if ((j >= first && j < last) != bool(complement)) keep.push_back(j);
                    if (keep.empty() || keep.size() == size) continue;
                    std::vector<HostTensor> candidate = keepAlong(m_inputs, axis, keep);
                    auto ok = tryCandidate(candidate, op);
                    if (!ok) return ok.error();
                    if (!*ok) continue;
                    accept(std::move(candidate), op,
                           axis.name + " " + std::to_string(size) + " -> " + std::to_string(keep.size()) +
                               " (" + (complement ? "without chunk " : "chunk ") + std::to_string(i + 1) +
                               " of " + std::to_string(n) + ")");
                    found = true;
                    n = complement ? std::max<uint64_t>(n - 1, 2) : 2;
                }
            }
            if (found) {
                progress = true;
                continue;
            }
            if (n >= std::min(size, kMaxGranularity)) break;
            n = std::min({2 * n, size, kMaxGranularity});
        }
        return progress;
    }

    // Parts of input `which` set to zero, chunk by chunk, 2 to kMaxGranularity chunks.
    Status zeroParts(size_t which)
    {
        const uint64_t count = m_inputs[which].elementCount();
        if (!isFloatingPoint(m_inputs[which].dtype) || count < 2) return {};
        for (uint64_t n = 2; n <= std::min(count, kMaxGranularity) && !m_stop; n *= 2)
            for (uint64_t i = 0; i < n && !m_stop; ++i) {
                const auto [first, last] = chunk(count, n, i);
                HostTensor part = m_inputs[which];
                zeroElements(part, first, last - first);
                if (part.data == m_inputs[which].data) continue;  // zero already
                std::vector<HostTensor> candidate = m_inputs;
                // Every input that is this tensor (one id) gets the same zeros.
                for (size_t j = 0; j < candidate.size(); ++j)
                    if (j == which ||
                        (m_op.inputs[j] == m_op.inputs[which] && candidate[j].shape == part.shape))
                        candidate[j] = part;
                auto ok = tryCandidate(candidate, m_op);
                if (!ok) return ok.error();
                if (*ok)
                    accept(std::move(candidate), m_op,
                           "input " + std::to_string(which) + " (" + m_op.inputs[which] + ") elements " +
                               std::to_string(first) + ".." + std::to_string(last - 1) + " set to 0");
            }
        return {};
    }

    const ShrinkOptions& m_o;
    const Trace& m_trace;
    TraceOp m_op;
    std::vector<HostTensor> m_inputs;
    const RateMeasure& m_original;
    const std::string& m_scratch;
    const Clock::time_point m_deadline;
    ShrinkReport& m_report;
    RateMeasure m_last;
    bool m_stop = false;
};

}  // namespace

Result<ShrinkReport> shrinkOp(const ShrinkOptions& o)
{
    if (!(o.confidence >= 0.5 && o.confidence <= 0.999999))
        return Error{"--confidence " + std::to_string(o.confidence) + ": must be between 0.5 and 0.999999",
                     ErrorCode::Usage};
    if (o.maxRuns == 0) return Error{"--max-runs must be at least 1", ErrorCode::Usage};
    OpenOptions open;
    open.allowExternal = o.setup.allowExternal;
    auto trace = readTrace(o.tracePath, open);
    if (!trace) return trace.error();
    const TraceOp* found = findTraceOpByIndex(*trace, o.opIndex);
    if (!found)
        return fileError(
            o.tracePath,
            "has no op " + std::to_string(o.opIndex) +
                (trace->ops.empty() ? std::string(" (it has no ops)")
                                    : " (its ops are " + std::to_string(trace->ops.front().index) + ".." +
                                          std::to_string(trace->ops.back().index) + ")"),
            ErrorCode::Usage);
    const TraceOp& op = *found;
    auto inputs = loadOpInputs(*trace, op);
    if (!inputs) return inputs.error();

    ShrinkReport report;
    report.trace = o.tracePath;
    report.out = o.outPath;
    report.target = o.target.text;
    report.op = op.op;
    report.name = op.name;
    report.opIndex = op.index;
    report.confidence = o.confidence;
    report.warnings = trace->warnings;

    RateProbeSetup setup = o.setup;
    auto ownScratch = ensureScratchDirectory(setup, "faultline-shrink-", "the candidates");
    if (!ownScratch) return ownScratch.error();
    const auto start = Clock::now();
    const Clock::time_point deadline = o.budget.count() > 0 ? start + o.budget : Clock::time_point::max();

    // The original: until enough failures for an interval, or the runs allowed; half the budget.
    const uint64_t wanted = o.failuresWanted, maxRuns = o.maxRuns;
    auto original = measureOpRate(
        o.tracePath, op.index, o.target,
        [wanted, maxRuns](uint64_t runs, uint64_t failures) { return failures >= wanted || runs >= maxRuns; },
        o.confidence, o.budget / 2, setup);
    if (!original) return original.error();
    if (!original->replayable)
        return fileError(o.tracePath, "op " + std::to_string(op.index) +
                                          " cannot be replayed: " + original->notReplayable);
    if (o.setup.cancel && o.setup.cancel->load()) return Error{"shrink cancelled", ErrorCode::Cancelled};
    report.original = sideOf(op, *inputs);
    report.original.rate = *original;
    if (!original->decided)
        report.warnings.push_back("the budget ended the original's runs after " +
                                  std::to_string(original->runs) +
                                  ": its interval is wider than --max-runs would give");
    if (original->failures == 0) return report;
    report.reproduced = true;

    Search search(o, *trace, op, std::move(*inputs), *original, setup.scratchDir, deadline, report);
    if (Status st = search.run(); !st) return st.error();
    if (report.end == ShrinkEnd::Cancelled) return Error{"shrink cancelled", ErrorCode::Cancelled};

    // The minimal reproducer, written and replayed once more as it is.
    std::map<std::string, std::string> notes{
        {"faultline_shrink", "minimal reproducer of op " + std::to_string(op.index) + " of " +
                                 std::filesystem::path(o.tracePath).filename().string() + " on " +
                                 o.target.text}};
    if (Status st = writeOneOpTrace(*trace, search.op(), search.inputs(), o.outPath, notes); !st)
        return st.error();
    report.minimal = sideOf(search.op(), search.inputs());
    auto check = measureOpRate(o.outPath, op.index, o.target,
                               insideIntervalRule(original->interval, original->runs, o.confidence),
                               o.confidence, std::chrono::milliseconds(0), setup);
    if (!check) return check.error();
    report.minimal.rate = *check;
    report.minimalReproduces = reproducesInside(*check, original->interval);
    if (!report.minimalReproduces)
        report.warnings.push_back(o.outPath + " replayed as written failed at " + rateText(check->interval) +
                                  ", outside the original interval: a rate this close to the interval's edge "
                                  "needs more runs (--max-runs)");
    return report;
}

}  // namespace faultline
