#include "CudaTarget.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "CompareKernel.h"
#include "CudaOpSettings.h"
#include "CudaRuntime.h"
#include "DeviceThread.h"
#include "GoldenKernels.h"
#include "LaunchGeometry.h"
#include "core/golden/OpChecks.h"
#include "core/golden/OpRegistry.h"

namespace faultline::cuda {
namespace {

using golden::OpParams;

// A device allocation owned by the device thread (freed there too).
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    ~DeviceBuffer() { cudaFree(m_ptr); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    int allocate(size_t bytes)
    {
        if (bytes == 0) return 0;
        return int(cudaMalloc(&m_ptr, bytes));
    }
    template <class T>
    T* as() const { return static_cast<T*>(m_ptr); }

private:
    void* m_ptr = nullptr;
};

// One op's execution on the device thread: collects the first CUDA error.
class OpRun {
public:
    OpRun(int device, cudaStream_t stream) : m_device(device), m_stream(stream) {}
    bool ok() const { return m_code == 0 && !m_error; }
    int code() const { return m_code; }
    Error error() const { return m_error ? *m_error : cudaErrorFor(m_device, m_what, m_code); }
    void check(int rc, const char* what)
    {
        if (rc != 0 && ok()) {
            m_code = rc;
            m_what = what;
        }
    }
    void fail(Error e)
    {
        if (ok()) m_error = std::move(e);
    }
    // Uploads values as float.
    float* upload(DeviceBuffer& buf, const std::vector<float>& v)
    {
        if (!ok()) return nullptr;
        check(buf.allocate(v.size() * sizeof(float)), "cudaMalloc");
        if (ok() && !v.empty())
            check(int(cudaMemcpyAsync(buf.as<float>(), v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice,
                                      m_stream)),
                  "cudaMemcpy to device");
        return buf.as<float>();
    }
    template <class T>
    T* allocate(DeviceBuffer& buf, size_t count)
    {
        if (!ok()) return nullptr;
        check(buf.allocate(count * sizeof(T)), "cudaMalloc");
        return buf.as<T>();
    }
    template <class T>
    void download(std::vector<T>& dst, const DeviceBuffer& buf, size_t count)
    {
        dst.resize(count);
        if (!ok() || count == 0) return;
        check(int(cudaMemcpyAsync(dst.data(), buf.as<T>(), count * sizeof(T), cudaMemcpyDeviceToHost, m_stream)),
              "cudaMemcpy to host");
    }
    int device() const { return m_device; }
    cudaStream_t stream() const { return m_stream; }

private:
    int m_device;
    cudaStream_t m_stream;
    int m_code = 0;
    const char* m_what = "";
    std::optional<Error> m_error;
};

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
    auto ta = golden::paramBool("gemm", p, "trans_a", false), tb = golden::paramBool("gemm", p, "trans_b", false);
    auto alpha = golden::paramFloat("gemm", p, "alpha", 1.0), beta = golden::paramFloat("gemm", p, "beta", 0.0);
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
    const std::vector<uint64_t> aBatch(a.begin(), a.end() - 2), bBatch(in[1].shape.begin(), in[1].shape.end() - 2);
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

class CudaTarget : public Target {
public:
    CudaTarget(TargetSpec spec, int device) : m_spec(std::move(spec)), m_device(device) {}
    ~CudaTarget() override
    {
        m_thread.runOnDeviceThread([this] {
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
            m_description = "cuda:" + std::to_string(m_device) + ": " + prop.name + " (" +
                            std::to_string(prop.multiProcessorCount) + " SMs, sm_" + std::to_string(prop.major) +
                            std::to_string(prop.minor) + ", pci " + std::to_string(prop.pciBusID) +
                            "); golden kernels, cuBLAS with impl=cublas";
            return Status::success();
        });
    }

    std::string label() const override { return m_spec.text; }
    std::string describe() const override { return m_description; }
    bool bitwiseStable() const override { return true; }
    bool fatalError() const override { return m_poisoned; }

    Result<ReplayOutput> run(const ReplayRequest& request, uint64_t) override
    {
        if (!request.op) return Error{"replay request without an op"};
        if (m_poisoned)
            return Error{"cuda:" + std::to_string(m_device) +
                         ": the device context was poisoned by an earlier error; restart the worker"};
        const std::string& op = request.op->op;
        if (!cudaTargetHasOp(op))
            return Error{"cuda:" + std::to_string(m_device) + ": op " + op +
                         ": no golden CUDA kernel for this op yet (the cpu target runs it)"};
        auto settings = parseCudaOpSettings(op, request.op->params);
        if (!settings) return settings.error();
        auto spec = golden::inferGoldenOutput(op, request.inputs, request.op->params);
        if (!spec) return spec.error();
        return m_thread.runOnDeviceThread(
            [&]() -> Result<ReplayOutput> { return runOnDevice(op, request.inputs, request.op->params, *settings, *spec); });
    }

private:
    Result<ReplayOutput> runOnDevice(const std::string& op, golden::GoldenInputs in, const OpParams& p,
                                     const CudaOpSettings& settings, const golden::OutputSpec& spec)
    {
        OpRun r(m_device, m_stream);
        ReplayOutput result;
        std::vector<float> outValues;
        std::vector<DeviceBuffer> inputs(in.size());
        std::vector<float*> dIn(in.size());
        for (size_t i = 0; i < in.size(); ++i) dIn[i] = r.upload(inputs[i], golden::toFloatVector(in[i]));
        const View2d view = view2d(spec.shape);
        const uint64_t count = golden::elementCountOf(spec.shape);
        DeviceBuffer outBuf, smBuf;
        float* dOut = r.allocate<float>(outBuf, count);
        TileGrid tiles = tileGrid(view, kSmallTile);
        if (op == "gemm") {
            auto shape = gemmShape(in, p, spec);
            if (!shape) return shape.error();
            if (settings.impl == CudaImpl::Cublas) {
                runCublas(r, *shape, dIn[0], dIn[1], dOut, settings.tf32);
                tiles = {};
            } else {
                tiles = tileGrid(view, gemmSmTile(shape->batch, shape->m));
                runGoldenGemm(r, *shape, dIn[0], dIn[1], dOut, r.allocate<int32_t>(smBuf, tiles.count()));
            }
        } else {
            int32_t* dSm = r.allocate<int32_t>(smBuf, tiles.count());
            if (r.ok()) r.check(launchOther(op, in, p, dIn, dOut, view, dSm), "launching the kernel");
        }
        r.download(outValues, outBuf, count);
        r.download(result.tileSm, smBuf, tiles.count());
        if (r.ok()) r.check(int(cudaStreamSynchronize(m_stream)), "running the op");
        if (r.ok()) r.check(int(cudaGetLastError()), "after the op");
        if (!r.ok()) {
            if (r.code() != 0 && isStickyCudaError(r.code())) m_poisoned = true;
            return r.error();
        }
        result.smTile = tiles.count() ? tiles.tile : 0;
        result.outputs.push_back(golden::fromFloatVector(spec.dtype, spec.shape, outValues));
        return result;
    }

    void runGoldenGemm(OpRun& r, const GemmShape& s, const float* a, const float* b, float* out, int32_t* tileSm)
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
        auto uploadOffsets = [&](DeviceBuffer& buf, const std::vector<int64_t>& v) -> const int64_t* {
            int64_t* d = r.allocate<int64_t>(buf, v.size());
            if (r.ok() && !v.empty())
                r.check(int(cudaMemcpyAsync(d, v.data(), v.size() * sizeof(int64_t), cudaMemcpyHostToDevice, m_stream)),
                        "cudaMemcpy to device");
            return d;
        };
        g.aOffsets = uploadOffsets(aOff, s.aOffsets);
        g.bOffsets = uploadOffsets(bOff, s.bOffsets);
        if (s.readC) g.c = r.upload(cBuf, s.c);
        if (r.ok()) r.check(launchGoldenGemm(g, m_stream), "launching the golden gemm");
        // The buffers are freed when this returns: wait for the kernel first.
        if (r.ok()) r.check(int(cudaStreamSynchronize(m_stream)), "running the golden gemm");
    }

    // D (row-major m x n) = op(A) op(B) is, column-major, D^T = op(B)^T op(A)^T.
    void runCublas(OpRun& r, const GemmShape& s, const float* a, const float* b, float* out, bool tf32)
    {
        if (!r.ok()) return;
        if (!m_cublas) {
            const cublasStatus_t cs = cublasCreate(&m_cublas);
            if (cs != CUBLAS_STATUS_SUCCESS) {
                m_cublas = nullptr;
                return r.fail(Error{"cuda:" + std::to_string(m_device) + ": cublasCreate: " + cublasText(cs)});
            }
            cublasSetStream(m_cublas, m_stream);
        }
        cublasStatus_t cs = cublasSetMathMode(m_cublas, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH);
        const size_t perBatch = size_t(s.m * s.n);
        if (s.readC && cs == CUBLAS_STATUS_SUCCESS) {
            // D starts as the broadcast C; cuBLAS computes alpha op(A) op(B) + beta D in place.
            r.check(int(cudaMemcpyAsync(out, s.c.data(), s.c.size() * sizeof(float), cudaMemcpyHostToDevice, m_stream)),
                    "cudaMemcpy to device");
        }
        const float beta = s.readC ? s.beta : 0.0f;
        for (int64_t bi = 0; bi < s.batch && r.ok() && cs == CUBLAS_STATUS_SUCCESS; ++bi) {
            if (s.k == 0 && !s.readC) {
                r.check(int(cudaMemsetAsync(out + bi * perBatch, 0, perBatch * sizeof(float), m_stream)), "cudaMemset");
                continue;
            }
            cs = cublasSgemm(m_cublas, s.transB ? CUBLAS_OP_T : CUBLAS_OP_N, s.transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                             int(s.n), int(s.m), int(s.k), &s.alpha, b + s.bOffsets[size_t(bi)],
                             leading(s.transB ? s.k : s.n), a + s.aOffsets[size_t(bi)],
                             leading(s.transA ? s.m : s.k), &beta, out + bi * perBatch, leading(s.n));
        }
        if (cs != CUBLAS_STATUS_SUCCESS) {
            const int rc = int(cudaPeekAtLastError());
            if (rc != 0) return r.check(rc, "cublasSgemm");
            r.fail(Error{"cuda:" + std::to_string(m_device) + ": cublasSgemm: " + cublasText(cs)});
        }
    }

    int launchOther(const std::string& op, golden::GoldenInputs in, const OpParams& p, const std::vector<float*>& dIn,
                    float* dOut, View2d view, int32_t* dSm)
    {
        if (op == "add") return launchGoldenElementwise(ElementwiseKind::Add, dIn[0], dIn[1], dOut, view, dSm, m_stream);
        if (op == "silu") return launchGoldenElementwise(ElementwiseKind::Silu, dIn[0], nullptr, dOut, view, dSm, m_stream);
        if (op == "gelu") {
            const auto approx = golden::paramString(op, p, "approximate", std::string("none"));
            const ElementwiseKind kind = approx && *approx == "tanh" ? ElementwiseKind::GeluTanh : ElementwiseKind::GeluErf;
            return launchGoldenElementwise(kind, dIn[0], nullptr, dOut, view, dSm, m_stream);
        }
        if (op == "softmax") {
            const bool hasScale = p.count("scale") != 0;
            const auto scale = hasScale ? golden::paramFloat(op, p, "scale", std::nullopt) : Result<float>(1.0f);
            return launchGoldenSoftmax(dIn[0], dOut, view, hasScale, scale ? *scale : 1.0f, dSm, m_stream);
        }
        if (op == "layernorm") {
            const auto eps = golden::paramEps(op, p, 1e-5);
            return launchGoldenLayerNorm(dIn[0], dIn[1], dIn[2], dOut, view, eps ? *eps : 1e-5f, dSm, m_stream);
        }
        if (op == "rmsnorm") {
            const auto eps = golden::paramEps(op, p, std::nullopt);
            return launchGoldenRmsNorm(dIn[0], dIn[1], dOut, view, eps ? *eps : 0.0f, dSm, m_stream);
        }
        (void)in;
        return int(cudaErrorNotSupported);
    }

    TargetSpec m_spec;
    int m_device;
    int m_smCount = 0;
    std::string m_description;
    bool m_poisoned = false;
    cudaStream_t m_stream = nullptr;
    cublasHandle_t m_cublas = nullptr;
    DeviceThread m_thread;  // last: joined first, before the members its work uses go away
};

}  // namespace

bool cudaTargetHasOp(const std::string& op)
{
    static const char* const kOps[] = {"gemm", "add", "gelu", "silu", "softmax", "layernorm", "rmsnorm"};
    return std::any_of(std::begin(kOps), std::end(kOps), [&](const char* o) { return op == o; });
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
        return Error{"target '" + spec.text + "': no such device (this machine has " + std::to_string(*count) +
                     " CUDA device(s))"};
    auto target = std::make_unique<CudaTarget>(spec, index);
    if (Status s = target->initOnDevice(); !s) return Error{"target '" + spec.text + "': " + s.message()};
    return std::unique_ptr<Target>(std::move(target));
}

}  // namespace faultline::cuda
