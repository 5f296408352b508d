// The ring schedules of the collectives and the simulated rank that runs them.
#include "CollectiveRing.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "../compare/Signature.h"
#include "../compare/TensorComparer.h"
#include "../golden/GoldenOrder.h"
#include "../golden/GoldenSupport.h"
#include "../golden/OpRegistry.h"
#include "../replay/FaultModel.h"
#include "../replay/TargetSpec.h"
#include "../replay/TensorLoad.h"
#include "LinkFault.h"

namespace faultline {

std::optional<CollectiveKind> collectiveKindOf(const std::string& op)
{
    for (CollectiveKind k : {CollectiveKind::AllReduce, CollectiveKind::AllGather,
                             CollectiveKind::ReduceScatter, CollectiveKind::Broadcast})
        if (collectiveKindName(k) == op) return k;
    return std::nullopt;
}

std::string collectiveKindName(CollectiveKind kind)
{
    switch (kind) {
        case CollectiveKind::AllReduce:
            return "all_reduce";
        case CollectiveKind::AllGather:
            return "all_gather";
        case CollectiveKind::ReduceScatter:
            return "reduce_scatter";
        case CollectiveKind::Broadcast:
            return "broadcast";
    }
    return "?";
}

Result<CollectiveProblem> loadCollectiveProblem(const Trace& trace, const TraceOp& op, size_t ranks,
                                                const std::string& tracePath)
{
    const std::string where = tracePath + ": op " + std::to_string(op.index) + " (" + op.op + ")";
    auto fail = [&](const std::string& problem) { return Error{where + ": " + problem, ErrorCode::Format}; };
    const auto kind = collectiveKindOf(op.op);
    if (!kind) return fail("not a collective");
    CollectiveProblem p;
    p.opIndex = op.index;
    p.moduleName = op.name;
    p.kind = *kind;
    if (op.inputs.size() != ranks)
        return Error{where + ": " + std::to_string(op.inputs.size()) + " rank input(s) but " +
                         std::to_string(ranks) + " targets: give one target per rank",
                     ErrorCode::Usage};
    if (auto it = op.params.find("ranks"); it != op.params.end()) {
        const auto* labels = std::get_if<std::vector<std::string>>(&it->second);
        const size_t count = labels ? labels->size() : 1;
        if (count != ranks)
            return fail("parameter ranks names " + std::to_string(count) + " rank(s) but it has " +
                        std::to_string(ranks) + " inputs");
    }
    auto inputs = loadOpInputs(trace, op);
    if (!inputs) return fail(inputs.message());
    p.inputs = std::move(*inputs);
    for (size_t r = 1; r < ranks; ++r)
        if (p.inputs[r].dtype != p.inputs[0].dtype || p.inputs[r].shape != p.inputs[0].shape)
            return fail("input of rank " + std::to_string(r) + " differs in dtype or shape from rank 0's");
    if (p.kind == CollectiveKind::AllReduce || p.kind == CollectiveKind::ReduceScatter) {
        golden::OpParams params;
        if (auto it = op.params.find("reduce_op"); it != op.params.end()) params["reduce_op"] = it->second;
        auto spec = golden::inferGoldenOutput("all_reduce", p.inputs, params);
        if (!spec) return fail(spec.message());
        p.reduceName = params.count("reduce_op") ? attrValueToString(params["reduce_op"]) : "sum";
        p.reduce = *golden::parseReduceOp(p.reduceName);
    }
    if (p.kind == CollectiveKind::ReduceScatter &&
        (p.inputs[0].shape.empty() || p.inputs[0].shape[0] % ranks != 0))
        return fail("dim 0 of the inputs is not divisible by the " + std::to_string(ranks) + " ranks");
    if (p.kind == CollectiveKind::Broadcast) {
        const auto it = op.params.find("root");
        const auto* root = it == op.params.end() ? nullptr : std::get_if<int64_t>(&it->second);
        if (!root || *root < 0 || size_t(*root) >= ranks)
            return fail("parameter root must be a rank in [0, " + std::to_string(ranks - 1) + "]");
        p.root = size_t(*root);
    }
    return p;
}

Status checkRingOrder(const std::vector<size_t>& ring, size_t ranks)
{
    std::vector<size_t> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
        if (sorted[i] != i || sorted.size() != ranks)
            return Error{"--ring " + ringText(ring) + " is not an order of the ranks 0.." +
                             std::to_string(ranks - 1) + " (each exactly once)",
                         ErrorCode::Usage};
    if (ring.size() != ranks)
        return Error{"--ring " + ringText(ring) + " names " + std::to_string(ring.size()) + " ranks, not " +
                         std::to_string(ranks),
                     ErrorCode::Usage};
    return {};
}

Result<std::vector<size_t>> parseRingText(const std::string& text)
{
    std::vector<size_t> ring;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t next = text.find(',', pos);
        if (next == std::string::npos) next = text.size();
        const std::string piece = text.substr(pos, next - pos);
        if (piece.empty() || piece.find_first_not_of("0123456789") != std::string::npos || piece.size() > 9)
            return Error{"--ring " + text + ": '" + piece + "' is not a rank index", ErrorCode::Usage};
        ring.push_back(std::stoul(piece));
        pos = next + 1;
    }
    return ring;
}

std::string ringText(const std::vector<size_t>& ring)
{
    std::string s;
    for (size_t r : ring) s += (s.empty() ? "" : ",") + std::to_string(r);
    return s;
}

namespace {

uint64_t elementsOf(const HostTensor& t)
{
    return t.elementCount();
}

// The element range [begin, end) of chunk c (position-space) in the buffers.
std::pair<uint64_t, uint64_t> chunkRange(const CollectiveProblem& p, const std::vector<size_t>& ring,
                                         size_t c)
{
    const size_t n = ring.size();
    const uint64_t e = elementsOf(p.inputs[0]);
    switch (p.kind) {
        case CollectiveKind::AllReduce:
            return {c * e / n, (c + 1) * e / n};
        case CollectiveKind::AllGather:
            return {ring[c] * e, (ring[c] + 1) * e};
        case CollectiveKind::ReduceScatter:
            return {ring[c] * (e / n), (ring[c] + 1) * (e / n)};
        case CollectiveKind::Broadcast:
            return {c * e / n, (c + 1) * e / n};
    }
    return {0, 0};
}

std::vector<RingTransfer> schedule(const CollectiveProblem& p, const std::vector<size_t>& ring)
{
    const size_t n = ring.size();
    const uint64_t es = dtypeSize(p.inputs[0].dtype);
    std::vector<RingTransfer> out;
    size_t step = 0;
    auto add = [&](size_t from, size_t chunk, bool reduce) {
        const auto [b, e] = chunkRange(p, ring, chunk);
        if (e == b) return;
        out.push_back({step, ring[from], ring[(from + 1) % n], b * es, (e - b) * es, reduce});
    };
    const bool rs = p.kind == CollectiveKind::AllReduce || p.kind == CollectiveKind::ReduceScatter;
    const bool ag = p.kind == CollectiveKind::AllReduce || p.kind == CollectiveKind::AllGather;
    if (rs)
        for (size_t s = 0; s + 1 < n; ++s, ++step)
            for (size_t i = 0; i < n; ++i) add(i, (i + 2 * n - s - 1) % n, true);
    if (ag)
        for (size_t s = 0; s + 1 < n; ++s, ++step)
            for (size_t i = 0; i < n; ++i) add(i, (i + n - s) % n, false);
    if (p.kind == CollectiveKind::Broadcast) {
        const size_t start = size_t(std::find(ring.begin(), ring.end(), p.root) - ring.begin());
        for (size_t s = 0; s + 1 < 2 * n - 1; ++s, ++step)
            for (size_t h = 0; h + 1 < n; ++h)
                if (s >= h && s - h < n) add((start + h) % n, s - h, false);
    }
    return out;
}

}  // namespace

HostTensor ringInitialBuffer(const CollectiveProblem& p, size_t rank)
{
    const HostTensor& x = p.inputs[rank];
    if (p.kind != CollectiveKind::AllGather) return x;
    const size_t n = p.inputs.size();
    HostTensor buffer(x.dtype, {elementsOf(x) * n});
    std::memcpy(buffer.data.data() + rank * x.data.size(), x.data.data(), x.data.size());
    return buffer;
}

HostTensor ringOutput(const CollectiveProblem& p, size_t rank, const HostTensor& buffer)
{
    const HostTensor& x = p.inputs[0];
    const size_t n = p.inputs.size();
    switch (p.kind) {
        case CollectiveKind::AllReduce:
        case CollectiveKind::Broadcast: {
            HostTensor out = buffer;
            out.shape = x.shape;
            return out;
        }
        case CollectiveKind::AllGather: {
            HostTensor out = buffer;
            out.shape = x.shape.empty() ? std::vector<uint64_t>{n} : x.shape;
            if (!x.shape.empty()) out.shape[0] *= n;
            return out;
        }
        case CollectiveKind::ReduceScatter: {
            std::vector<uint64_t> shape = x.shape;
            shape[0] /= n;
            HostTensor out(x.dtype, shape);
            std::memcpy(out.data.data(), buffer.data.data() + rank * out.data.size(), out.data.size());
            return out;
        }
    }
    return buffer;
}

void ringReduce(DType dtype, golden::ReduceOp op, const unsigned char* received, unsigned char* into,
                uint64_t count)
{
    HostTensor a(dtype, {count}), b(dtype, {count});
    std::memcpy(a.data.data(), received, a.data.size());
    std::memcpy(b.data.data(), into, b.data.size());
    std::vector<float> x = golden::toFloatVector(a);
    const std::vector<float> y = golden::toFloatVector(b);
    for (uint64_t i = 0; i < count; ++i)
        x[i] = op == golden::ReduceOp::Sum   ? x[i] + y[i]
               : op == golden::ReduceOp::Max ? golden::goldenMax(x[i], y[i])
                                             : golden::goldenMin(x[i], y[i]);
    const HostTensor r = golden::fromFloatVector(dtype, {count}, x);
    std::memcpy(into, r.data.data(), r.data.size());
}

RingPlan planRing(const CollectiveProblem& problem, const std::vector<size_t>& ring)
{
    RingPlan plan;
    plan.ring = ring;
    plan.transfers = schedule(problem, ring);
    std::vector<HostTensor> buffers;
    for (size_t r = 0; r < ring.size(); ++r) buffers.push_back(ringInitialBuffer(problem, r));
    const DType dtype = problem.inputs[0].dtype;
    // Transfers of one step read the buffers as they were before the step.
    for (size_t t = 0; t < plan.transfers.size();) {
        size_t end = t;
        while (end < plan.transfers.size() && plan.transfers[end].step == plan.transfers[t].step) ++end;
        for (size_t k = t; k < end; ++k) {
            const RingTransfer& x = plan.transfers[k];
            const auto* from = reinterpret_cast<const unsigned char*>(buffers[x.src].data.data()) + x.offset;
            plan.expected.emplace_back(from, from + x.bytes);
        }
        for (size_t k = t; k < end; ++k) {
            const RingTransfer& x = plan.transfers[k];
            auto* to = reinterpret_cast<unsigned char*>(buffers[x.dst].data.data()) + x.offset;
            if (x.reduce)
                ringReduce(dtype, problem.reduce, plan.expected[k].data(), to, x.bytes / dtypeSize(dtype));
            else
                std::memcpy(to, plan.expected[k].data(), x.bytes);
        }
        t = end;
    }
    return plan;
}

struct RingRank::Impl {
    size_t self = 0;
    uint64_t seed = 1;
    std::unique_ptr<FaultModel> model;
    LinkFault link;
    uint64_t handled = 0;  // transfers through this GPU (hang/crash models count these)
    const CollectiveProblem* problem = nullptr;
    const RingPlan* plan = nullptr;
    uint32_t rep = 0;
    HostTensor buffer;

    // What this GPU does to a chunk passing through it; false when it does not answer.
    bool passThrough(std::vector<unsigned char>& bytes, size_t t, RunOutcome& failure)
    {
        FaultContext ctx;
        ctx.op = collectiveKindName(problem->kind);
        ctx.moduleName = problem->moduleName;
        ctx.opIndex = problem->opIndex;
        ctx.opsRun = handled++;
        ctx.repetition = rep;
        ctx.seed = mixSeed(mixSeed(seed, problem->opIndex), mixSeed(t, self));
        if (!model->applies(ctx)) return true;
        const FaultAction action = model->actionBefore(ctx);
        if (action != FaultAction::None) {
            failure = outcomeOf(action);
            return false;
        }
        const DType dtype = problem->inputs[0].dtype;
        HostTensor chunk(dtype, {bytes.size() / dtypeSize(dtype)});
        std::memcpy(chunk.data.data(), bytes.data(), bytes.size());
        model->corrupt(chunk, 0, ctx);
        std::memcpy(bytes.data(), chunk.data.data(), bytes.size());
        return true;
    }
};

RingRank::RingRank(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
RingRank::RingRank(RingRank&&) noexcept = default;
RingRank& RingRank::operator=(RingRank&&) noexcept = default;
RingRank::~RingRank() = default;

Result<RingRank> RingRank::create(const std::vector<std::string>& targets, size_t self, uint64_t seed)
{
    if (self >= targets.size()) return Error{"rank beyond the targets", ErrorCode::Usage};
    auto spec = parseTargetSpec(targets[self]);
    if (!spec) return Error{spec.message(), ErrorCode::Usage};
    if (spec->kind != "sim")
        return Error{"target '" + spec->text +
                         "': ring ranks are sim: targets (cuda: ranks run through NCCL, and a communicator "
                         "does not mix them)",
                     ErrorCode::Usage};
    auto link = takeLinkFault(*spec, self, targets.size());
    if (!link) return link.error();
    auto model = createFaultModel(*spec);
    if (!model) return Error{model.message(), ErrorCode::Usage};
    if ((*model)->trigger().any())
        return Error{"target '" + spec->text + "': " + kTriggerRefusal, ErrorCode::Usage};
    auto impl = std::make_unique<Impl>();
    impl->self = self;
    impl->seed = seed;
    impl->model = std::move(*model);
    impl->link = *link;
    return RingRank(std::move(impl));
}

std::string RingRank::describe() const
{
    return m_impl->model->describe() + "; " + m_impl->link.describe();
}

void RingRank::begin(const CollectiveProblem& problem, const RingPlan* plan, uint32_t rep)
{
    m_impl->problem = &problem;
    m_impl->plan = plan;
    m_impl->rep = rep;
    m_impl->buffer = ringInitialBuffer(problem, m_impl->self);
}

RingWire RingRank::send(size_t t)
{
    Impl& d = *m_impl;
    const RingTransfer& x = d.plan->transfers[t];
    const auto* from = reinterpret_cast<const unsigned char*>(d.buffer.data.data()) + x.offset;
    RingWire wire;
    wire.bytes.assign(from, from + x.bytes);
    const std::vector<unsigned char>& expected = d.plan->expected[t];
    for (uint64_t i = 0; i < x.bytes; ++i)
        if (wire.bytes[i] != expected[i]) wire.inherited.push_back(i);
    wire.answered = d.passThrough(wire.bytes, t, wire.failure);
    if (!wire.answered) {
        wire.bytes.clear();
        wire.inherited.clear();
        return wire;
    }
    if (d.link.active() && size_t(d.link.to) == x.dst)
        d.link.corrupt(wire.bytes.data(), wire.bytes.size(), d.self, uint32_t(mixSeed(d.rep, t)));
    return wire;
}

RingArrival RingRank::receive(size_t t, RingWire wire)
{
    Impl& d = *m_impl;
    const RingTransfer& x = d.plan->transfers[t];
    RingArrival out;
    if (!wire.answered || wire.bytes.size() != x.bytes) {
        out.answered = false;
        out.failure = wire.answered ? RunOutcome::Error : wire.failure;
        return out;
    }
    RunOutcome failure = RunOutcome::Ok;
    if (!d.passThrough(wire.bytes, t, failure)) {
        out.answered = false;
        out.byReceiver = true;
        out.failure = failure;
        return out;
    }
    const std::vector<unsigned char>& expected = d.plan->expected[t];
    std::vector<bool> inherited(x.bytes, false);
    for (uint64_t i : wire.inherited)
        if (i < x.bytes) inherited[i] = true;
    for (uint64_t i = 0; i < x.bytes; ++i)
        if (wire.bytes[i] != expected[i]) {
            ++out.differingBytes;
            out.enteredBytes += !inherited[i];
        }
    if (out.enteredBytes > 0) {
        const DType dtype = d.problem->inputs[0].dtype;
        TensorComparer comparer;
        auto div =
            comparer.compare(dtype, {x.bytes / dtypeSize(dtype)}, wire.bytes.data(), expected.data(), "hop");
        out.signature = div ? std::string(signatureKindName(div->signature.kind)) : "unknown";
    }
    auto* to = reinterpret_cast<unsigned char*>(d.buffer.data.data()) + x.offset;
    if (x.reduce)
        ringReduce(d.problem->inputs[0].dtype, d.problem->reduce, wire.bytes.data(), to,
                   x.bytes / dtypeSize(d.problem->inputs[0].dtype));
    else
        std::memcpy(to, wire.bytes.data(), x.bytes);
    return out;
}

HostTensor RingRank::output() const
{
    return ringOutput(*m_impl->problem, m_impl->self, m_impl->buffer);
}

}  // namespace faultline
