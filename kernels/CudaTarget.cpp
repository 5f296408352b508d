#include "CudaTarget.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>

#include "CompareKernel.h"
#include "CublasLtGemm.h"
#include "CudaOpSettings.h"
#include "CudaPeerKey.h"
#include "CudaRuntime.h"
#include "DeviceThread.h"
#include "GoldenKernels.h"
#include "LaunchGeometry.h"
#include "NcclAllReduce.h"
#include "OpRun.h"
#include "core/golden/AllReduceGolden.h"
#include "core/golden/OpChecks.h"
#include "core/golden/OpRegistry.h"
#include "core/trace/TraceOps.h"

namespace faultline::cuda {
namespace {

using golden::OpParams;

// A leading dimension as cuBLAS wants it (at least 1, also for an empty operand).
int leading(int64_t ld)
{
    return int(std::max<int64_t>(ld, 1));
}

std::string cublasText(cublasStatus_t s)
{
    return std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s);
}

struct GemmShape {
    int64_t batch = 1, m = 0, n = 0, k = 0;
    bool transA = false, transB = false, readC = false;
    float alpha = 1.0f, beta = 0.0f;
    std::vector<int64_t> aOffsets, bOffsets;
    std::vector<float> c;  // broadcast to the output, when readC
};

// The golden glue's plan (core/golden/LinearOps.cpp) for inputs already validated by
// inferGoldenOutput.
Result<GemmShape> gemmShape(golden::GoldenInputs in, const OpParams& p, const golden::OutputSpec& out)
{
    GemmShape s;
    auto ta = golden::paramBool("gemm", p, "trans_a", false),
         tb = golden::paramBool("gemm", p, "trans_b", false);
    auto alpha = golden::paramFloat("gemm", p, "alpha", 1.0),
         beta = golden::paramFloat("gemm", p, "beta", 0.0);
    if (!ta) return ta.error();
    if (!tb) return tb.error();
    if (!alpha) return alpha.error();
    if (!beta) return beta.error();
    s.transA = *ta;
    s.transB = *tb;
    s.alpha = *alpha;
    s.beta = *beta;
    const auto& a = in[0].shape;
    s.m = int64_t(out.shape[out.shape.size() - 2]);
    s.n = int64_t(out.shape.back());
    s.k = int64_t(s.transA ? a[a.size() - 2] : a[a.size() - 1]);
    const std::vector<uint64_t> batchShape(out.shape.begin(), out.shape.end() - 2);
    s.batch = int64_t(golden::elementCountOf(batchShape));
    const std::vector<uint64_t> aBatch(a.begin(), a.end() - 2),
        bBatch(in[1].shape.begin(), in[1].shape.end() - 2);
    s.aOffsets = golden::broadcastIndex(aBatch, batchShape, s.m * s.k);
    s.bOffsets = golden::broadcastIndex(bBatch, batchShape, s.k * s.n);
    if (in.size() == 3 && s.beta != 0.0f) {
        s.readC = true;
        const std::vector<float> c = golden::toFloatVector(in[2]);
        const std::vector<int64_t> idx = golden::broadcastIndex(in[2].shape, out.shape);
        s.c.resize(idx.size());
        for (size_t e = 0; e < idx.size(); ++e) s.c[e] = c[size_t(idx[e])];
    }
    return s;
}

ReduceKind reduceKindOf(golden::ReduceOp op)
{
    switch (op) {
        case golden::ReduceOp::Sum:
            return ReduceKind::Sum;
        case golden::ReduceOp::Max:
            return ReduceKind::Max;
        case golden::ReduceOp::Min:
            return ReduceKind::Min;
    }
    return ReduceKind::Sum;
}

// A fingerprint of an op's inputs (dtypes, shapes, bytes), so a kept repetition is only compared
// with a run of the same op on the same data.
uint64_t inputsFingerprint(const std::string& op, golden::GoldenInputs in)
{
    uint64_t h = 0xcbf29ce484222325ull;
    auto mix = [&h](uint64_t v) {
        h ^= v;
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    };
    for (char ch : op) mix(uint64_t(uint8_t(ch)));
    for (const HostTensor& t : in) {
        mix(uint64_t(t.dtype));
        for (uint64_t d : t.shape) mix(d);
        const size_t words = t.data.size() / 8;
        for (size_t w = 0; w < words; ++w) {
            uint64_t v;
            std::memcpy(&v, t.data.data() + w * 8, 8);
            mix(v);
        }
        for (size_t b = words * 8; b < t.data.size(); ++b) mix(uint64_t(t.data[b]));
    }
    return h;
}

// The first repetition's output 0 of the op last run, kept on the device for RepeatCheck.
struct FirstRep {
    size_t opIndex = 0;
    uint64_t inputs = 0;
    uint32_t rep = 0;
    uint64_t count = 0;
    bool valid = false;
    DeviceBuffer values;
};

class CudaTarget : public Target {
public:
    CudaTarget(TargetSpec spec, int device) : m_spec(std::move(spec)), m_device(device) {}
    ~CudaTarget() override
    {
        m_thread.runOnDeviceThread([this] {
            m_firstRep.values.release();
            m_lt.reset();
            if (m_cublas) cublasDestroy(m_cublas);
            if (m_stream) cudaStreamDestroy(m_stream);
            return 0;
        });
    }

    // On the device thread: selects the device, creates the context and the stream.
    Status initOnDevice()
    {
        return m_thread.runOnDeviceThread([this]() -> Status {
            int rc = int(cudaSetDevice(m_device));
            if (rc == 0) rc = int(cudaFree(nullptr));  // creates the primary context now
            cudaDeviceProp prop{};
            if (rc == 0) rc = int(cudaGetDeviceProperties(&prop, m_device));
            if (rc == 0) rc = int(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
            if (rc != 0) return cudaErrorFor(m_device, "initialising the device", rc);
            m_smCount = prop.multiProcessorCount;
            m_peerKey = cudaPeerKeyOfDevice(m_device);
            m_description = "cuda:" + std::to_string(m_device) + ": " + prop.name + " (" +
                            std::to_string(prop.multiProcessorCount) + " SMs, sm_" +
                            std::to_string(prop.major) + std::to_string(prop.minor) + ", pci " +
                            std::to_string(prop.pciBusID) +
                            "); golden kernels, cuBLAS/cuBLASLt with impl=cublas/cublaslt" +
                            (ncclBuilt() ? ", NCCL with impl=nccl" : "");
            m_lt = std::make_unique<CublasLtRunner>(m_device);
            return Status::success();
        });
    }

    std::string label() const override { return m_spec.text; }
    std::string describe() const override { return m_description; }
    bool bitwiseStable() const override { return true; }
    std::string peerKey() const override { return m_peerKey; }
    bool fatalError() const override { return m_poisoned; }

    Result<ReplayOutput> run(const ReplayRequest& request, uint64_t) override
    {
        if (!request.op) return Error{"replay request without an op"};
        if (m_poisoned)
            return Error{"cuda:" + std::to_string(m_device) +
                         ": the device context was poisoned by an earlier error; restart the worker"};
        const std::string& op = request.op->op;
        if (!cudaTargetHasOp(op))
            return Error{"cuda:" + std::to_string(m_device) + ": op " + op + ": no CUDA kernel for this op"};
        auto settings = parseCudaOpSettings(op, request.op->params);
        if (!settings) return settings.error();
        auto spec = golden::inferGoldenOutput(op, request.inputs, request.op->params);
        if (!spec) return spec.error();
        return m_thread.runOnDeviceThread([&]() -> Result<ReplayOutput> {
            OpRun r(m_device, m_stream);
            auto result = runOnDevice(r, request, *settings, *spec);
            if (!result && r.code() != 0 && isStickyCudaError(r.code())) m_poisoned = true;
            return result;
        });
    }

private:
    Result<ReplayOutput> runOnDevice(OpRun& r, const ReplayRequest& request, const CudaOpSettings& settings,
                                     const golden::OutputSpec& spec)
    {
        const std::string& op = request.op->op;
        const OpParams& p = request.op->params;
        golden::GoldenInputs in = request.inputs;
        if (settings.impl == CudaImpl::CublasLt) return runCublasLt(r, in, p, settings, spec);
        if (settings.impl == CudaImpl::Nccl) return runNccl(r, in, p);

        ReplayOutput result;
        std::vector<float> outValues;
        std::vector<DeviceBuffer> inputs(in.size());
        std::vector<float*> dIn(in.size());
        for (size_t i = 0; i < in.size(); ++i) dIn[i] = r.upload(inputs[i], golden::toFloatVector(in[i]));
        const View2d view = view2d(spec.shape);
        const uint64_t count = golden::elementCountOf(spec.shape);
        DeviceBuffer outBuf, smBuf, extra;
        float* dOut = r.allocate<float>(outBuf, count);
        TileGrid tiles = tileGrid(view, kSmallTile);
        const ScopedGridCap gridCap(settings.grid);  // grid=N: the launches below stride over N blocks
        if (op == "gemm") {
            auto shape = gemmShape(in, p, spec);
            if (!shape) return shape.error();
            if (settings.impl == CudaImpl::Cublas) {
                runCublas(r, *shape, dIn[0], dIn[1], dOut, settings.mathMode);
                tiles = {};
            } else {
                tiles = gemmTileMap(view, shape->batch, shape->m);
                runGoldenGemm(r, *shape, dIn[0], dIn[1], dOut,
                              tiles.count() ? r.allocate<int32_t>(smBuf, tiles.count()) : nullptr);
            }
        } else {
            int32_t* dSm = r.allocate<int32_t>(smBuf, tiles.count());
            if (r.ok())
                r.check(launchOther(r, op, in, p, dIn, dOut, view, dSm, extra), "launching the kernel");
        }
        if (r.ok() && spec.dtype == DType::Float32)
            result.repeatCheck = checkRepeat(r, request, dOut, view, count);
        // Identical to the repetition the orchestrator holds: the output stays on the device.
        result.outputOmitted = r.ok() && mayOmitOutput(request, result.repeatCheck, 1);
        if (!result.outputOmitted) r.download(outValues, outBuf, count);
        r.download(result.tileSm, smBuf, tiles.count());
        if (r.ok()) r.check(int(cudaStreamSynchronize(m_stream)), "running the op");
        if (r.ok()) r.check(int(cudaGetLastError()), "after the op");
        if (!r.ok()) return r.error();
        result.smTile = tiles.count() ? tiles.tile : 0;
        if (result.outputOmitted) {
            HostTensor omitted;  // dtype and shape only (Target.h, ReplayOutput::outputOmitted)
            omitted.dtype = spec.dtype;
            omitted.shape = spec.shape;
            result.outputs.push_back(std::move(omitted));
        } else {
            result.outputs.push_back(golden::fromFloatVector(spec.dtype, spec.shape, outValues));
        }
        result.goldenExact = settings.impl == CudaImpl::Golden;
        return result;
    }

    // Determinism across repetitions, judged on the device: the first repetition of an op keeps
    // its float32 output here; later repetitions of the same op compare with it (CompareKernel:
    // XOR/popcount counts, max error, tile maxima) instead of the host comparing digests of
    // outputs it has already received. Only float32 outputs (whose device floats are exactly the
    // bytes the host sees), so the answer is the digest comparison's.
    std::optional<RepeatCheck> checkRepeat(OpRun& r, const ReplayRequest& request, const float* dOut,
                                           View2d view, uint64_t count)
    {
        const size_t opIndex = request.op->index;
        const uint64_t inputs = inputsFingerprint(request.op->op, request.inputs);
        FirstRep& f = m_firstRep;
        if (!f.valid || f.opIndex != opIndex || f.inputs != inputs || f.count != count ||
            request.repetition == f.rep) {
            // A new op (or the same repetition again): this output becomes the reference.
            f.values.release();
            f.valid = false;
            if (count == 0) return std::nullopt;
            float* keep = r.allocate<float>(f.values, count);
            if (r.ok())
                r.check(int(cudaMemcpyAsync(keep, dOut, count * sizeof(float), cudaMemcpyDeviceToDevice,
                                            m_stream)),
                        "keeping the first repetition");
            if (!r.ok()) return std::nullopt;
            f.opIndex = opIndex;
            f.inputs = inputs;
            f.rep = request.repetition;
            f.count = count;
            f.valid = true;
            return std::nullopt;
        }
        std::vector<float> tileMax;
        int code = 0;
        auto s = compareOnDevice(m_device, f.values.as<float>(), dOut, view, kCompareTile, &tileMax, m_stream,
                                 &code);
        if (!s) {
            r.fail(s.error(),
                   code);  // the op's own kernel may have faulted: keep the code for the sticky check
            return std::nullopt;
        }
        RepeatCheck c;
        c.againstRep = f.rep;
        c.mismatched = s->mismatched;
        c.flippedBits = s->flippedBits;
        c.maxAbsError = s->maxAbsError;
        c.tile = kCompareTile;
        if (s->mismatched) {
            // The tile with the largest error; none when every difference is of size 0 (+0 vs -0).
            const auto worst = std::max_element(tileMax.begin(), tileMax.end());
            if (worst != tileMax.end() && *worst > 0.0f) c.worstTile = int64_t(worst - tileMax.begin());
        }
        return c;
    }

    void runGoldenGemm(OpRun& r, const GemmShape& s, const float* a, const float* b, float* out,
                       int32_t* tileSm)
    {
        DeviceBuffer aOff, bOff, cBuf;
        DeviceGemm g;
        g.batch = s.batch;
        g.m = s.m;
        g.n = s.n;
        g.k = s.k;
        g.a = a;
        g.b = b;
        g.aRowStride = s.transA ? 1 : s.k;
        g.aColStride = s.transA ? s.m : 1;
        g.bRowStride = s.transB ? 1 : s.n;
        g.bColStride = s.transB ? s.k : 1;
        g.readC = s.readC;
        g.alpha = s.alpha;
        g.beta = s.beta;
        g.out = out;
        g.tileSm = tileSm;
        g.aOffsets = r.uploadBytes<int64_t>(aOff, s.aOffsets.data(), s.aOffsets.size() * sizeof(int64_t));
        g.bOffsets = r.uploadBytes<int64_t>(bOff, s.bOffsets.data(), s.bOffsets.size() * sizeof(int64_t));
        if (s.readC) g.c = r.upload(cBuf, s.c);
        if (r.ok()) r.check(launchGoldenGemm(g, m_stream), "launching the golden gemm");
        // The buffers are freed when this returns: wait for the kernel first.
        if (r.ok()) r.check(int(cudaStreamSynchronize(m_stream)), "running the golden gemm");
    }

    // D (row-major m x n) = op(A) op(B) is, column-major, D^T = op(B)^T op(A)^T.
    void runCublas(OpRun& r, const GemmShape& s, const float* a, const float* b, float* out,
                   CublasMathMode mode)
    {
        if (!r.ok()) return;
        if (!m_cublas) {
            const cublasStatus_t cs = cublasCreate(&m_cublas);
            if (cs != CUBLAS_STATUS_SUCCESS) {
                m_cublas = nullptr;
                // A context an earlier fault poisoned fails here first: keep its code (sticky check).
                return r.fail(Error{"cuda:" + std::to_string(m_device) + ": cublasCreate: " + cublasText(cs)},
                              int(cudaPeekAtLastError()));
            }
            cublasSetStream(m_cublas, m_stream);
        }
        const cublasMath_t math = mode == CublasMathMode::Tf32      ? CUBLAS_TF32_TENSOR_OP_MATH
                                  : mode == CublasMathMode::Default ? CUBLAS_DEFAULT_MATH
                                                                    : CUBLAS_PEDANTIC_MATH;
        cublasStatus_t cs = cublasSetMathMode(m_cublas, math);
        const size_t perBatch = size_t(s.m * s.n);
        if (s.readC && cs == CUBLAS_STATUS_SUCCESS) {
            // D starts as the broadcast C; cuBLAS computes alpha op(A) op(B) + beta D in place.
            r.check(int(cudaMemcpyAsync(out, s.c.data(), s.c.size() * sizeof(float), cudaMemcpyHostToDevice,
                                        m_stream)),
                    "cudaMemcpy to device");
        }
        const float beta = s.readC ? s.beta : 0.0f;
        for (int64_t bi = 0; bi < s.batch && r.ok() && cs == CUBLAS_STATUS_SUCCESS; ++bi) {
            if (s.k == 0 && !s.readC) {
                r.check(int(cudaMemsetAsync(out + bi * perBatch, 0, perBatch * sizeof(float), m_stream)),
                        "cudaMemset");
                continue;
            }
            cs = cublasSgemm(m_cublas, s.transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                             s.transA ? CUBLAS_OP_T : CUBLAS_OP_N, int(s.n), int(s.m), int(s.k), &s.alpha,
                             b + s.bOffsets[size_t(bi)], leading(s.transB ? s.k : s.n),
                             a + s.aOffsets[size_t(bi)], leading(s.transA ? s.m : s.k), &beta,
                             out + bi * perBatch, leading(s.n));
        }
        if (cs != CUBLAS_STATUS_SUCCESS) {
            const int rc = int(cudaPeekAtLastError());
            if (rc != 0) return r.check(rc, "cublasSgemm");
            r.fail(Error{"cuda:" + std::to_string(m_device) + ": cublasSgemm: " + cublasText(cs)});
        }
    }

    // gemm through cuBLASLt on the tensors' own bytes; the output comes back in out_dtype as the
    // library wrote it.
    Result<ReplayOutput> runCublasLt(OpRun& r, golden::GoldenInputs in, const OpParams& p,
                                     const CudaOpSettings& settings, const golden::OutputSpec& spec)
    {
        if (in[0].dtype != in[1].dtype)
            return Error{
                "cuda:" + std::to_string(m_device) + ": cublaslt replay needs A and B of one dtype (" +
                std::string(dtypeName(in[0].dtype)) + ", " + std::string(dtypeName(in[1].dtype)) + ")"};
        auto shape = gemmShape(in, p, spec);
        if (!shape) return shape.error();
        auto types = ltTypes(in[0].dtype, spec.dtype);
        if (!types) return Error{"cuda:" + std::to_string(m_device) + ": " + types.message()};
        DeviceBuffer aBuf, bBuf, cBuf, dBuf;
        LtGemm g;
        g.batch = shape->batch;
        g.m = shape->m;
        g.n = shape->n;
        g.k = shape->k;
        g.transA = shape->transA;
        g.transB = shape->transB;
        g.in = in[0].dtype;
        g.out = spec.dtype;
        g.a = r.uploadBytes<void>(aBuf, in[0].data.data(), in[0].byteCount());
        g.b = r.uploadBytes<void>(bBuf, in[1].data.data(), in[1].byteCount());
        g.aOffsets = shape->aOffsets;
        g.bOffsets = shape->bOffsets;
        g.alpha = shape->alpha;
        g.beta = shape->beta;
        if (shape->readC) {
            // C in D's type, as cuBLASLt reads it (rounded once when C's own dtype is wider).
            const HostTensor c = golden::fromFloatVector(spec.dtype, spec.shape, shape->c);
            g.c = r.uploadBytes<void>(cBuf, c.data.data(), c.byteCount());
        }
        HostTensor out(spec.dtype, spec.shape);
        g.d = r.allocate<std::byte>(dBuf, out.byteCount());
        if (r.ok()) {
            int code = 0;
            if (Status st = m_lt->run(g, settings, m_stream, &code); !st) r.fail(st.error(), code);
        }
        if (r.ok() && out.byteCount())
            r.check(int(cudaMemcpyAsync(out.data.data(), dBuf.as<void>(), out.byteCount(),
                                        cudaMemcpyDeviceToHost, m_stream)),
                    "cudaMemcpy to host");
        if (r.ok()) r.check(int(cudaStreamSynchronize(m_stream)), "running cublasLtMatmul");
        if (!r.ok()) return r.error();
        ReplayOutput result;
        result.outputs.push_back(std::move(out));
        return result;
    }

    // all_reduce through NCCL across local GPUs: every rank's output, rank 0's first.
    Result<ReplayOutput> runNccl(OpRun& r, golden::GoldenInputs in, const OpParams& p)
    {
        std::vector<std::string> labels;
        if (auto it = p.find("ranks"); it != p.end())
            if (const auto* l = std::get_if<std::vector<std::string>>(&it->second)) labels = *l;
        auto count = deviceCount();
        if (!count) return Error{"cuda:" + std::to_string(m_device) + ": " + count.message()};
        auto devices = ncclRankDevices(labels, in.size(), *count);
        if (!devices) return Error{"cuda:" + std::to_string(m_device) + ": " + devices.message()};
        const auto name = golden::paramString("all_reduce", p, "reduce_op", std::string("sum"));
        const auto reduce = name ? golden::parseReduceOp(*name) : std::nullopt;
        if (!reduce) return Error{"cuda:" + std::to_string(m_device) + ": all_reduce: bad reduce_op"};
        int code = 0;
        auto outputs = ncclAllReduce(reduceKindOf(*reduce), in, *devices, &code);
        if (!outputs) {
            r.fail(Error{"cuda:" + std::to_string(m_device) + ": " + outputs.message()}, code);
            return r.error();
        }
        ReplayOutput result;
        result.outputs = std::move(outputs).value();
        return result;
    }

    // The golden kernel of every op but gemm (runOnDevice) and the collectives through NCCL.
    int launchOther(OpRun& r, const std::string& op, golden::GoldenInputs in, const OpParams& p,
                    const std::vector<float*>& dIn, float* dOut, View2d view, int32_t* dSm,
                    DeviceBuffer& extra)
    {
        const auto kind = opKindOf(op);
        if (!kind) return int(cudaErrorNotSupported);
        // Which ops have a kernel is decided once, in cudaTargetHasOp (an exhaustive switch); the
        // rest are judged by the golden model on the host only.
        if (!cudaTargetHasOp(op)) return int(cudaErrorNotSupported);
        switch (*kind) {
            case OpKind::Gemm:
                return int(cudaErrorNotSupported);  // runOnDevice runs it
            case OpKind::Add:
                // The kernel computes x + y of one shape: alpha, a scalar or broadcasting are not on cuda.
                if (!plainBinary(in, p)) return int(cudaErrorNotSupported);
                return launchGoldenElementwise(ElementwiseKind::Add, dIn[0], dIn[1], dOut, view, dSm,
                                               m_stream);
            case OpKind::Mul:
                if (!plainBinary(in, p)) return int(cudaErrorNotSupported);
                return launchGoldenElementwise(ElementwiseKind::Mul, dIn[0], dIn[1], dOut, view, dSm,
                                               m_stream);
            case OpKind::Silu:
                return launchGoldenElementwise(ElementwiseKind::Silu, dIn[0], nullptr, dOut, view, dSm,
                                               m_stream);
            case OpKind::Gelu:
                return launchGelu(op, p, dIn, dOut, view, dSm);
            case OpKind::Softmax:
                return launchSoftmax(op, p, dIn, dOut, view, dSm);
            case OpKind::LayerNorm: {
                const auto eps = golden::paramEps(op, p, 1e-5);
                return launchGoldenLayerNorm(dIn[0], dIn[1], dIn[2], dOut, view, eps ? *eps : 1e-5f, dSm,
                                             m_stream);
            }
            case OpKind::RmsNorm: {
                const auto eps = golden::paramEps(op, p, std::nullopt);
                return launchGoldenRmsNorm(dIn[0], dIn[1], dOut, view, eps ? *eps : 0.0f, dSm, m_stream);
            }
            case OpKind::Attention:
                return launchAttention(r, op, in, p, dIn, dOut, dSm, extra);
            case OpKind::AllGather:
            case OpKind::Broadcast:
                return launchGather(r, *kind, op, in, p, dIn, dOut, view, dSm, extra);
            case OpKind::AllReduce:
            case OpKind::ReduceScatter:
                return launchAllReduce(r, op, p, dIn, dOut, view, dSm, extra);
            default:
                return int(cudaErrorNotSupported);  // not reached: cudaTargetHasOp said no
        }
        return int(cudaErrorNotSupported);
    }

    // add/mul as the golden kernel computes them: two inputs of one shape, alpha 1.
    static bool plainBinary(golden::GoldenInputs in, const OpParams& p)
    {
        if (in.size() != 2 || in[0].shape != in[1].shape) return false;
        const auto alpha = golden::paramDouble("add", p, "alpha", 1.0);
        return alpha && *alpha == 1.0;
    }

    int launchGelu(const std::string& op, const OpParams& p, const std::vector<float*>& dIn, float* dOut,
                   View2d view, int32_t* dSm)
    {
        const auto approx = golden::paramString(op, p, "approximate", std::string("none"));
        const ElementwiseKind kind =
            approx && *approx == "tanh" ? ElementwiseKind::GeluTanh : ElementwiseKind::GeluErf;
        return launchGoldenElementwise(kind, dIn[0], nullptr, dOut, view, dSm, m_stream);
    }

    int launchSoftmax(const std::string& op, const OpParams& p, const std::vector<float*>& dIn, float* dOut,
                      View2d view, int32_t* dSm)
    {
        const bool hasScale = p.count("scale") != 0;
        const auto scale = hasScale ? golden::paramFloat(op, p, "scale", std::nullopt) : Result<float>(1.0f);
        return launchGoldenSoftmax(dIn[0], dOut, view, hasScale, scale ? *scale : 1.0f, dSm, m_stream);
    }

    int launchAttention(OpRun& r, const std::string& op, golden::GoldenInputs in, const OpParams& p,
                        const std::vector<float*>& dIn, float* dOut, int32_t* dSm, DeviceBuffer& extra)
    {
        // The shapes were validated by inferGoldenOutput (LinearOps.cpp's planAttention).
        const auto& q = in[0].shape;
        DeviceAttention a;
        a.heads = int64_t(q[0] * q[1]);
        a.sq = int64_t(q[2]);
        a.sk = int64_t(in[1].shape[2]);
        a.d = int64_t(q[3]);
        a.dv = int64_t(in[2].shape[3]);
        a.q = dIn[0];
        a.k = dIn[1];
        a.v = dIn[2];
        a.out = dOut;
        const auto causal = golden::paramBool(op, p, "causal", false);
        const auto scale = golden::paramFloat(op, p, "scale", 1.0 / std::sqrt(double(q[3])));
        a.causal = causal && *causal;
        a.scale = scale ? *scale : 1.0f;
        a.scratch = r.allocate<float>(
            extra, attentionScratchFloats(uint64_t(a.heads) * uint64_t(a.sq), uint64_t(a.sk)));
        a.tileSm = dSm;
        if (!r.ok()) return 0;  // the allocation's error is recorded already
        const int rc = launchGoldenAttention(a, m_stream);
        // The scratch is freed when the caller returns: wait for the kernel first.
        return rc != 0 ? rc : int(cudaStreamSynchronize(m_stream));
    }

    int launchGather(OpRun& r, OpKind kind, const std::string& op, golden::GoldenInputs in, const OpParams& p,
                     const std::vector<float*>& dIn, float* dOut, View2d view, int32_t* dSm,
                     DeviceBuffer& extra)
    {
        std::vector<const float*> ptrs(dIn.begin(), dIn.end());
        if (kind == OpKind::Broadcast) {
            const auto root = golden::paramDouble(op, p, "root", 0.0);  // validated by inferGoldenOutput
            ptrs = {dIn[root ? size_t(*root) : 0]};
        }
        const uint64_t perRank = golden::elementCountOf(in[0].shape);
        const float* const* dPtrs =
            r.uploadBytes<const float*>(extra, ptrs.data(), ptrs.size() * sizeof(const float*));
        if (!r.ok()) return 0;
        const int rc = launchGoldenGather(dPtrs, int32_t(ptrs.size()), perRank, dOut, view, dSm, m_stream);
        // The pointer array is freed when the caller returns: wait for the kernel first.
        return rc != 0 ? rc : int(cudaStreamSynchronize(m_stream));
    }

    int launchAllReduce(OpRun& r, const std::string& op, const OpParams& p, const std::vector<float*>& dIn,
                        float* dOut, View2d view, int32_t* dSm, DeviceBuffer& extra)
    {
        const auto name = golden::paramString(op, p, "reduce_op", std::string("sum"));
        const auto reduce = name ? golden::parseReduceOp(*name) : std::nullopt;
        std::vector<const float*> ptrs(dIn.begin(), dIn.end());
        const float* const* dPtrs =
            r.uploadBytes<const float*>(extra, ptrs.data(), ptrs.size() * sizeof(const float*));
        if (!r.ok()) return 0;
        const int rc = launchGoldenAllReduce(reduceKindOf(reduce ? *reduce : golden::ReduceOp::Sum), dPtrs,
                                             int32_t(ptrs.size()), dOut, view, dSm, m_stream);
        // The pointer array is freed when the caller returns: wait for the kernel first.
        return rc != 0 ? rc : int(cudaStreamSynchronize(m_stream));
    }

    TargetSpec m_spec;
    int m_device;
    int m_smCount = 0;
    std::string m_peerKey;
    std::string m_description;
    bool m_poisoned = false;
    cudaStream_t m_stream = nullptr;
    cublasHandle_t m_cublas = nullptr;
    std::unique_ptr<CublasLtRunner> m_lt;
    FirstRep m_firstRep;
    DeviceThread m_thread;  // last: joined first, before the members its work uses go away
};

}  // namespace

bool cudaTargetHasOp(const std::string& op)
{
    const auto kind = opKindOf(op);
    if (!kind) return false;
    switch (*kind) {  // no default: a new op kind does not compile until it is decided here
        case OpKind::Gemm:
        case OpKind::LayerNorm:
        case OpKind::RmsNorm:
        case OpKind::Softmax:
        case OpKind::Gelu:
        case OpKind::Silu:
        case OpKind::Add:
        case OpKind::Mul:
        case OpKind::Attention:
        case OpKind::AllReduce:
        case OpKind::AllGather:
        case OpKind::ReduceScatter:
        case OpKind::Broadcast:
            return true;
        // Loss, embedding and backward ops (#22): no CUDA golden kernel.
        case OpKind::Embedding:
        case OpKind::EmbeddingBackward:
        case OpKind::LogSoftmax:
        case OpKind::LogSoftmaxBackward:
        case OpKind::NllLoss:
        case OpKind::NllLossTotalWeight:
        case OpKind::NllLossBackward:
        case OpKind::SoftmaxBackward:
        case OpKind::LayerNormBackwardInput:
        case OpKind::LayerNormBackwardWeight:
        case OpKind::LayerNormBackwardBias:
        case OpKind::GeluBackward:
        case OpKind::SiluBackward:
        case OpKind::AttentionBackwardQ:
        case OpKind::AttentionBackwardK:
        case OpKind::AttentionBackwardV:
            return false;
        case OpKind::Sub:
        case OpKind::Div:
        case OpKind::Neg:
        case OpKind::Sqrt:
        case OpKind::Rsqrt:
        case OpKind::Exp:
        case OpKind::Pow:
        case OpKind::Addcmul:
        case OpKind::Addcdiv:
        case OpKind::Lerp:
        case OpKind::Dropout:
        case OpKind::MaskedFill:
        case OpKind::Where:
        case OpKind::Triu:
        case OpKind::Tril:
        case OpKind::Cat:
        case OpKind::Sum:
        case OpKind::Mean:
        case OpKind::Relu:
        case OpKind::ThresholdBackward:
        case OpKind::SelectBackward:
        case OpKind::AdamExpAvg:
        case OpKind::AdamExpAvgSq:
        case OpKind::AdamParam:
            return false;  // golden on the CPU only
    }
    return false;
}

Result<std::unique_ptr<Target>> createCudaTarget(const TargetSpec& spec)
{
    int index = -1;
    const std::string& m = spec.model;
    const auto [ptr, ec] = std::from_chars(m.data(), m.data() + m.size(), index);
    if (spec.kind != "cuda" || ec != std::errc() || ptr != m.data() + m.size() || index < 0)
        return Error{"target '" + spec.text + "': expected cuda:<device index>"};
    auto count = deviceCount();
    if (!count) return Error{"target '" + spec.text + "': " + count.message()};
    if (index >= *count)
        return Error{"target '" + spec.text + "': no such device (this machine has " +
                     std::to_string(*count) + " CUDA device(s))"};
    auto target = std::make_unique<CudaTarget>(spec, index);
    if (Status s = target->initOnDevice(); !s) return Error{"target '" + spec.text + "': " + s.message()};
    return std::unique_ptr<Target>(std::move(target));
}

}  // namespace faultline::cuda
