#include "DemoIncident.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include "../io/SnapshotWriter.h"
#include "../replay/Target.h"
#include "../trace/TraceWriter.h"

namespace faultline {
namespace {

constexpr uint64_t kBatch = 2, kSeq = 32, kModel = 64, kHeads = 4, kHidden = 256;
constexpr uint64_t kRows = kBatch * kSeq, kHeadDim = kModel / kHeads;
constexpr float kLearningRate = 0.05f;

using Params = std::map<std::string, AttrValue>;

HostTensor randomTensor(std::vector<uint64_t> shape, std::mt19937_64& rng, float scale, float offset = 0.0f)
{
    HostTensor t(DType::Float32, std::move(shape));
    std::normal_distribution<float> n(0.0f, 1.0f);
    float* p = t.as<float>();
    for (uint64_t i = 0; i < t.elementCount(); ++i) p[i] = offset + scale * n(rng);
    return t;
}

// [B*S, H*Dh] <-> [B, H, S, Dh]
HostTensor toHeads(const HostTensor& x)
{
    HostTensor t(DType::Float32, {kBatch, kHeads, kSeq, kHeadDim});
    const float* s = x.as<float>();
    float* d = t.as<float>();
    for (uint64_t b = 0; b < kBatch; ++b)
        for (uint64_t h = 0; h < kHeads; ++h)
            for (uint64_t q = 0; q < kSeq; ++q)
                for (uint64_t e = 0; e < kHeadDim; ++e)
                    d[((b * kHeads + h) * kSeq + q) * kHeadDim + e] =
                        s[(b * kSeq + q) * kModel + h * kHeadDim + e];
    return t;
}

HostTensor fromHeads(const HostTensor& x)
{
    HostTensor t(DType::Float32, {kRows, kModel});
    const float* s = x.as<float>();
    float* d = t.as<float>();
    for (uint64_t b = 0; b < kBatch; ++b)
        for (uint64_t h = 0; h < kHeads; ++h)
            for (uint64_t q = 0; q < kSeq; ++q)
                for (uint64_t e = 0; e < kHeadDim; ++e)
                    d[(b * kSeq + q) * kModel + h * kHeadDim + e] =
                        s[((b * kHeads + h) * kSeq + q) * kHeadDim + e];
    return t;
}

struct Weights {
    HostTensor wq, wk, wv, wo, w1, w2, g1, b1, g2, b2;
    std::vector<std::pair<std::string, const HostTensor*>> named() const
    {
        return {{"blocks.0.attn.q_proj.weight", &wq}, {"blocks.0.attn.k_proj.weight", &wk},
                {"blocks.0.attn.v_proj.weight", &wv}, {"blocks.0.attn.o_proj.weight", &wo},
                {"blocks.0.mlp.fc1.weight", &w1},     {"blocks.0.mlp.fc2.weight", &w2},
                {"blocks.0.ln1.weight", &g1},         {"blocks.0.ln1.bias", &b1},
                {"blocks.0.ln2.weight", &g2},         {"blocks.0.ln2.bias", &b2}};
    }
};

Weights initialWeights(uint64_t seed)
{
    std::mt19937_64 rng(seed);
    const float s = 1.0f / std::sqrt(float(kModel));
    Weights w;
    w.wq = randomTensor({kModel, kModel}, rng, s);
    w.wk = randomTensor({kModel, kModel}, rng, s);
    w.wv = randomTensor({kModel, kModel}, rng, s);
    w.wo = randomTensor({kModel, kModel}, rng, s);
    w.w1 = randomTensor({kModel, kHidden}, rng, s);
    w.w2 = randomTensor({kHidden, kModel}, rng, 1.0f / std::sqrt(float(kHidden)));
    w.g1 = randomTensor({kModel}, rng, 0.02f, 1.0f);
    w.b1 = randomTensor({kModel}, rng, 0.02f);
    w.g2 = randomTensor({kModel}, rng, 0.02f, 1.0f);
    w.b2 = randomTensor({kModel}, rng, 0.02f);
    return w;
}

// One recorded op of the captured step.
struct Captured {
    TraceOp op;
    std::vector<HostTensor> inputs;
    HostTensor suspectOut, healthyOut;
};

// Runs ops on one device, optionally capturing them (with a healthy re-run) for the trace.
class Device {
public:
    Device(Target& target, Target* healthy, std::vector<Captured>* capture, uint64_t seed)
        : m_target(target), m_healthy(healthy), m_capture(capture), m_seed(seed)
    {
    }

    Result<HostTensor> call(const std::string& op, const std::string& name, const std::string& phase,
                            std::vector<HostTensor> inputs, Params params = {})
    {
        TraceOp t;
        t.index = m_opCount;
        t.op = op;
        t.name = name;
        t.phase = phase;
        t.params = std::move(params);
        ReplayRequest request;
        request.op = &t;
        request.inputs = inputs;
        request.seed = m_seed;
        auto out = m_target.run(request, m_opCount);
        ++m_opCount;
        if (!out) return out.error();
        HostTensor result = std::move(out->outputs.front());
        if (m_capture) {
            auto healthy = m_healthy->run(request, t.index);
            if (!healthy) return healthy.error();
            m_capture->push_back({t, std::move(inputs), result, std::move(healthy->outputs.front())});
        }
        return result;
    }

private:
    Target& m_target;
    Target* m_healthy;
    std::vector<Captured>* m_capture;
    uint64_t m_seed;
    uint64_t m_opCount = 0;
};

struct StepResult {
    HostTensor out, dW1, dW2;
    double loss = 0;
};

#define FL_TRY(var, expr)                 \
    auto var##_r = (expr);                \
    if (!var##_r) return var##_r.error(); \
    HostTensor var = std::move(var##_r).value()

Result<StepResult> forwardBackward(Device& dev, const Weights& w, const HostTensor& x,
                                   const HostTensor& target)
{
    const Params ln = {{"eps", 1e-5}};
    FL_TRY(ln1, dev.call("layernorm", "blocks.0.ln1", "forward", {x, w.g1, w.b1}, ln));
    FL_TRY(q, dev.call("gemm", "blocks.0.attn.q_proj", "forward", {ln1, w.wq}));
    FL_TRY(k, dev.call("gemm", "blocks.0.attn.k_proj", "forward", {ln1, w.wk}));
    FL_TRY(v, dev.call("gemm", "blocks.0.attn.v_proj", "forward", {ln1, w.wv}));
    FL_TRY(att, dev.call("attention", "blocks.0.attn.core", "forward", {toHeads(q), toHeads(k), toHeads(v)},
                         {{"causal", int64_t(1)}, {"scale", 1.0 / std::sqrt(double(kHeadDim))}}));
    FL_TRY(o, dev.call("gemm", "blocks.0.attn.o_proj", "forward", {fromHeads(att), w.wo}));
    FL_TRY(r1, dev.call("add", "blocks.0.attn.residual", "forward", {x, o}));
    FL_TRY(ln2, dev.call("layernorm", "blocks.0.ln2", "forward", {r1, w.g2, w.b2}, ln));
    FL_TRY(h, dev.call("gemm", "blocks.0.mlp.fc1", "forward", {ln2, w.w1}));
    FL_TRY(g, dev.call("gelu", "blocks.0.mlp.act", "forward", {h}, {{"approximate", std::string("tanh")}}));
    FL_TRY(y, dev.call("gemm", "blocks.0.mlp.fc2", "forward", {g, w.w2}));
    FL_TRY(out, dev.call("add", "blocks.0.mlp.residual", "forward", {r1, y}));

    // Mean squared error and its gradient, in the training loop's own code.
    StepResult s;
    HostTensor dOut(DType::Float32, {kRows, kModel});
    const double n = double(out.elementCount());
    for (uint64_t i = 0; i < out.elementCount(); ++i) {
        const double d = double(out.as<float>()[i]) - double(target.as<float>()[i]);
        s.loss += d * d / n;
        dOut.as<float>()[i] = float(2.0 * d / n);
    }
    FL_TRY(dW2, dev.call("gemm", "blocks.0.mlp.fc2.grad_weight", "backward", {g, dOut},
                         {{"trans_a", int64_t(1)}}));
    FL_TRY(dG, dev.call("gemm", "blocks.0.mlp.fc2.grad_input", "backward", {dOut, w.w2},
                        {{"trans_b", int64_t(1)}}));
    // GELU (tanh) derivative, elementwise in the training loop.
    HostTensor dH(DType::Float32, {kRows, kHidden});
    for (uint64_t i = 0; i < dH.elementCount(); ++i) {
        const double xv = h.as<float>()[i], c = std::sqrt(2.0 / M_PI);
        const double u = c * (xv + 0.044715 * xv * xv * xv), t = std::tanh(u);
        const double du = c * (1 + 3 * 0.044715 * xv * xv);
        dH.as<float>()[i] = float(dG.as<float>()[i] * (0.5 * (1 + t) + 0.5 * xv * (1 - t * t) * du));
    }
    FL_TRY(dW1, dev.call("gemm", "blocks.0.mlp.fc1.grad_weight", "backward", {ln2, dH},
                         {{"trans_a", int64_t(1)}}));
    s.out = std::move(out);
    s.dW1 = std::move(dW1);
    s.dW2 = std::move(dW2);
    return s;
}

Status writeCheckpoint(const std::string& path, const Weights& w, const StepResult& s, uint32_t step,
                       int rank, const std::string& device, const std::string& role)
{
    auto writer = SnapshotWriter::create(path);
    if (!writer) return writer.error();
    Status st;
    auto check = [&st](Status x) {
        if (st && !x) st = std::move(x);
    };
    check(writer->setRootAttribute("device", device));
    check(writer->setRootAttribute("role", role));
    check(writer->setRootAttribute("step", int64_t(step)));
    check(writer->setRootAttribute("rank", int64_t(rank)));
    TensorWriteOptions weight, grad, act;
    weight.kind = "weight";
    grad.kind = "grad";
    act.kind = "activation";
    for (const auto& [name, t] : w.named())
        check(writer->writeTensor("weights/" + name, t->dtype, t->shape, t->data.data(), weight));
    check(writer->writeTensor("grads/blocks.0.mlp.fc1.weight", s.dW1.dtype, s.dW1.shape, s.dW1.data.data(),
                              grad));
    check(writer->writeTensor("grads/blocks.0.mlp.fc2.weight", s.dW2.dtype, s.dW2.shape, s.dW2.data.data(),
                              grad));
    check(writer->writeTensor("activations/blocks.0.out", s.out.dtype, s.out.shape, s.out.data.data(), act));
    if (!st) return st;
    return writer->close();
}

Status sgdUpdate(HostTensor& w, const HostTensor& reducedSum, float ranks)
{
    if (w.shape != reducedSum.shape)
        return Error{"demo: gradient shape does not match its weight", ErrorCode::Failed};
    for (uint64_t i = 0; i < w.elementCount(); ++i)
        w.as<float>()[i] -= kLearningRate * reducedSum.as<float>()[i] / ranks;
    return {};
}

// Trains `steps` steps; rank 1 runs on `rank1Target`. Captures the last step when `capture`.
Result<std::vector<double>> train(const DemoOptions& o, Target& rank0Target, Target& rank1Target,
                                  Target& healthy, std::vector<Captured>* capture, const std::string& runName,
                                  std::vector<std::string>& checkpoints)
{
    Weights w = initialWeights(o.seed);
    std::mt19937_64 data(o.seed + 1);
    const HostTensor mix = randomTensor({kModel, kModel}, data, 1.0f / std::sqrt(float(kModel)));
    std::vector<double> losses;
    const std::string dir = o.outDir + "/checkpoints/" + runName;
    std::filesystem::create_directories(dir);
    for (uint32_t step = 1; step <= o.steps; ++step) {
        StepResult results[2];
        for (int rank = 0; rank < 2; ++rank) {
            const HostTensor x = randomTensor({kRows, kModel}, data, 1.0f);
            HostTensor target(DType::Float32, {kRows, kModel});  // a fixed linear map of x
            for (uint64_t r = 0; r < kRows; ++r)
                for (uint64_t c = 0; c < kModel; ++c) {
                    float acc = 0;
                    for (uint64_t k = 0; k < kModel; ++k)
                        acc += x.as<float>()[r * kModel + k] * mix.as<float>()[k * kModel + c];
                    target.as<float>()[r * kModel + c] = acc;
                }
            const bool captureThis = capture && rank == 1 && step == o.steps;
            Device dev(rank == 0 ? rank0Target : rank1Target, &healthy, captureThis ? capture : nullptr,
                       o.seed + step);
            auto s = forwardBackward(dev, w, x, target);
            if (!s) return s.error();
            results[rank] = std::move(s).value();
        }
        // Gradient all_reduce (sum), run by rank 1's device, captured with the step.
        Device dev(rank1Target, &healthy, capture && step == o.steps ? capture : nullptr,
                   o.seed + 1000 + step);
        const Params ar = {{"reduce_op", std::string("sum")},
                           {"ranks", std::vector<std::string>{"gpu0", "gpu1"}}};
        auto r1 = dev.call("all_reduce", "ddp.allreduce.blocks.0.mlp.fc1.weight", "backward",
                           {results[0].dW1, results[1].dW1}, ar);
        if (!r1) return r1.error();
        auto r2 = dev.call("all_reduce", "ddp.allreduce.blocks.0.mlp.fc2.weight", "backward",
                           {results[0].dW2, results[1].dW2}, ar);
        if (!r2) return r2.error();
        for (int rank = 0; rank < 2; ++rank) {
            char name[64];
            std::snprintf(name, sizeof name, "/step-%03u-rank-%d.h5", step, rank);
            const std::string path = dir + name;
            const bool suspect = runName == "incident" && rank == 1;
            Status st = writeCheckpoint(path, w, results[rank], step, rank, rank == 0 ? "gpu0" : "gpu1",
                                        suspect ? "suspect" : "reference");
            if (!st) return st.error();
            checkpoints.push_back(path);
        }
        Status st = sgdUpdate(w.w1, *r1, 2.0f);
        if (st) st = sgdUpdate(w.w2, *r2, 2.0f);
        if (!st) return st.error();
        losses.push_back(0.5 * (results[0].loss + results[1].loss));
    }
    return losses;
}

Status writeTrace(const std::string& path, const std::vector<Captured>& ops, const std::string& defect)
{
    auto writer = TraceWriter::create(path);
    if (!writer) return writer.error();
    Status st;
    auto check = [&st](Status x) {
        if (st && !x) st = std::move(x);
    };
    check(writer->setAttribute("description",
                               std::string("Faultline demo incident: last training step of rank 1, "
                                           "re-run on a healthy GPU")));
    check(writer->setAttribute("step", int64_t(ops.empty() ? 0 : 3)));
    TraceDevice gpu0{"gpu0",
                     "Simulated H200 (healthy)",
                     "GPU-5d7e1a62-0000-4000-8000-000000000000",
                     "1652822000000",
                     "0000:18:00.0",
                     "580.65.06",
                     "reference",
                     {}};
    TraceDevice gpu1{"gpu1",
                     "Simulated H200 (suspect)",
                     "GPU-9c3b0f17-0000-4000-8000-000000000001",
                     "1652822001234",
                     "0000:2a:00.0",
                     "580.65.06",
                     "suspect",
                     {{"simulated_defect", defect}}};
    check(writer->addDevice(gpu0));
    check(writer->addDevice(gpu1));
    for (const Captured& c : ops) {
        if (!st) break;
        TraceOp op = c.op;
        op.inputs.clear();
        for (size_t i = 0; i < c.inputs.size(); ++i) {
            const std::string id = c.op.name + ".in" + std::to_string(i);
            op.inputs.push_back(id);
            check(writer->addTensor(id, {c.inputs[i].dtype, c.inputs[i].shape, c.inputs[i].data.data()}));
        }
        std::map<std::string, std::vector<TensorData>> outputs;
        outputs["gpu1"] = {{c.suspectOut.dtype, c.suspectOut.shape, c.suspectOut.data.data()}};
        outputs["gpu0"] = {{c.healthyOut.dtype, c.healthyOut.shape, c.healthyOut.data.data()}};
        check(writer->addOp(op, outputs));
    }
    if (!st) return st;
    return writer->close();
}

}  // namespace

Result<DemoIncident> buildDemoIncident(const DemoOptions& options)
{
    std::error_code ec;
    std::filesystem::create_directories(options.outDir, ec);
    if (ec) return fileError(options.outDir, "cannot create directory: " + ec.message(), ErrorCode::Io);
    auto cpuSpec = parseTargetSpec("cpu");
    auto defectSpec = parseTargetSpec(options.suspectDefect);
    if (!defectSpec) return defectSpec.error();
    auto cpu = createTarget(*cpuSpec);
    auto healthy = createTarget(*cpuSpec);
    auto suspect = createTarget(*defectSpec);
    if (!suspect) return suspect.error();

    DemoIncident incident;
    incident.suspectDefect = defectSpec->text;
    auto healthyLoss =
        train(options, **cpu, **cpu, **healthy, nullptr, "healthy", incident.healthyCheckpoints);
    if (!healthyLoss) return healthyLoss.error();
    std::vector<Captured> captured;
    auto incidentLoss =
        train(options, **cpu, **suspect, **healthy, &captured, "incident", incident.incidentCheckpoints);
    if (!incidentLoss) return incidentLoss.error();
    incident.healthyLoss = *healthyLoss;
    incident.incidentLoss = *incidentLoss;
    incident.tracePath = options.outDir + "/incident-trace.h5";
    for (size_t i = 0; i < captured.size(); ++i) captured[i].op.index = i;
    Status st = writeTrace(incident.tracePath, captured, incident.suspectDefect);
    if (!st) return st.error();
    incident.opsRecorded = captured.size();
    return incident;
}

}  // namespace faultline
