// bench_gpu: the GPU checks scripts/gpu-check prints (no timing is asserted anywhere).
//  1. every golden kernel (attention and all_reduce included) bit-exact against the CPU golden
//     model on several shapes (NaN equals any NaN, GoldenOrder.h)
//  2. cuBLAS SGEMM (pedantic math) and cuBLASLt (32F_PEDANTIC, 32F_FAST_TF32) deterministic over
//     100 repetitions each, judged on the device
//  3. golden GEMM GFLOP/s beside cuBLAS SGEMM on N^3 (goal: >= 0.5x)
//  4. device-side compare bandwidth beside a device-to-device memcpy (goal: >= 70%)
// Exit code: 0 when every check of 1 and 2 passed, 1 otherwise, 2 when there is no device.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "core/golden/GoldenOrder.h"
#include "core/golden/GoldenSupport.h"
#include "core/golden/OpRegistry.h"
#include "core/replay/TargetSpec.h"
#include "kernels/CompareKernel.h"
#include "kernels/CublasLtGemm.h"
#include "kernels/CudaRuntime.h"
#include "kernels/CudaTarget.h"
#include "kernels/GoldenKernels.h"

using namespace faultline;

namespace {

HostTensor randomTensor(std::vector<uint64_t> shape, uint32_t seed, float scale = 1.0f)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(size_t(golden::elementCountOf(shape)));
    for (float& x : v) x = dist(rng);
    return golden::fromFloatVector(DType::Float32, std::move(shape), v);
}

struct Case {
    const char* label;
    std::string op;
    std::vector<HostTensor> inputs;
    std::map<std::string, AttrValue> params;
};

bool checkBitExact(Target& target)
{
    std::vector<Case> cases;
    for (int64_t s : {1, 63, 128, 257, 512}) {
        const auto u = uint64_t(s);
        cases.push_back({"gemm", "gemm", {randomTensor({u, u + 3}, 1), randomTensor({u + 3, u + 1}, 2)}, {}});
    }
    cases.push_back({"gemm trans",
                     "gemm",
                     {randomTensor({200, 130}, 3), randomTensor({300, 200}, 4)},
                     {{"trans_a", int64_t(1)}, {"trans_b", int64_t(1)}}});
    cases.push_back({"gemm batched+C",
                     "gemm",
                     {randomTensor({4, 96, 80}, 5), randomTensor({80, 64}, 6), randomTensor({64}, 7)},
                     {{"alpha", 0.5}, {"beta", 2.0}}});
    for (uint64_t n : {1ull, 31ull, 1000ull, 8192ull}) {
        cases.push_back({"add", "add", {randomTensor({64, n}, 10), randomTensor({64, n}, 11)}, {}});
        cases.push_back({"gelu", "gelu", {randomTensor({64, n}, 12, 4)}, {}});
        cases.push_back(
            {"gelu tanh", "gelu", {randomTensor({64, n}, 13, 4)}, {{"approximate", std::string("tanh")}}});
        cases.push_back({"silu", "silu", {randomTensor({64, n}, 14, 6)}, {}});
        cases.push_back({"softmax", "softmax", {randomTensor({64, n}, 15, 5)}, {{"scale", 0.3}}});
        cases.push_back({"layernorm",
                         "layernorm",
                         {randomTensor({64, n}, 16), randomTensor({n}, 17), randomTensor({n}, 18)},
                         {}});
        cases.push_back(
            {"rmsnorm", "rmsnorm", {randomTensor({64, n}, 19), randomTensor({n}, 20)}, {{"eps", 1e-6}}});
        cases.push_back({"all_reduce sum",
                         "all_reduce",
                         {randomTensor({64, n}, 21), randomTensor({64, n}, 22), randomTensor({64, n}, 23),
                          randomTensor({64, n}, 24)},
                         {}});
        cases.push_back({"all_reduce max",
                         "all_reduce",
                         {randomTensor({64, n}, 25), randomTensor({64, n}, 26)},
                         {{"reduce_op", std::string("max")}}});
    }
    // attention: q [b, h, sq, d], k/v [b, h, sk, d|dv]; causal and not, short and long key rows.
    struct AttentionShape {
        uint64_t b, h, sq, sk, d, dv;
    };
    for (const AttentionShape& a :
         {AttentionShape{1, 8, 256, 256, 64, 64}, AttentionShape{2, 4, 100, 1000, 128, 96},
          AttentionShape{1, 2, 1, 4096, 32, 32}, AttentionShape{3, 1, 33, 7, 5, 3}}) {
        for (bool causal : {false, true}) {
            cases.push_back(
                {causal ? "attention causal" : "attention",
                 "attention",
                 {randomTensor({a.b, a.h, a.sq, a.d}, 30, 2), randomTensor({a.b, a.h, a.sk, a.d}, 31, 2),
                  randomTensor({a.b, a.h, a.sk, a.dv}, 32)},
                 {{"causal", int64_t(causal)}}});
        }
    }
    bool all = true;
    for (const Case& c : cases) {
        TraceOp op;
        op.op = c.op;
        op.params = c.params;
        ReplayRequest r;
        r.op = &op;
        r.inputs = c.inputs;
        auto gpu = target.run(r, 0);
        auto cpu = golden::runGolden(c.op, c.inputs, c.params);
        std::string shape = golden::shapeString(c.inputs[0].shape);
        if (!gpu || !cpu) {
            std::printf("  %-16s %-16s ERROR %s\n", c.label, shape.c_str(),
                        !gpu ? gpu.message().c_str() : cpu.message().c_str());
            all = false;
            continue;
        }
        const auto a = golden::toFloatVector(*cpu), b = golden::toFloatVector(gpu->outputs[0]);
        // The golden contract's equality: identical bits, or NaN on both sides (GoldenOrder.h).
        size_t diff = 0;
        for (size_t i = 0; i < a.size(); ++i) diff += !golden::goldenSameResult(a[i], b[i]);
        std::printf("  %-16s %-16s %s (%zu of %zu elements differ; %zu SM tiles)\n", c.label, shape.c_str(),
                    diff == 0 ? "bit-exact" : "MISMATCH", diff, a.size(), gpu->tileSm.size());
        all = all && diff == 0;
    }
    return all;
}

#define CK(x)                                                                                \
    do {                                                                                     \
        const int rc_ = int(x);                                                              \
        if (rc_ != 0) {                                                                      \
            std::printf("CUDA/cuBLAS error %d at %s:%d: %s\n", rc_, __FILE__, __LINE__, #x); \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

float* deviceRandom(size_t count, uint32_t seed)
{
    std::vector<float> h(count);
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist;
    for (float& x : h) x = dist(rng);
    float* d = nullptr;
    CK(cudaMalloc(&d, count * 4));
    CK(cudaMemcpy(d, h.data(), count * 4, cudaMemcpyHostToDevice));
    return d;
}

template <class F>
double timeMs(F f, int reps)
{
    cudaEvent_t start, stop;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    f();  // warm-up
    CK(cudaEventRecord(start));
    for (int i = 0; i < reps; ++i) f();
    CK(cudaEventRecord(stop));
    CK(cudaEventSynchronize(stop));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, start, stop));
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return double(ms) / reps;
}

}  // namespace

int main(int argc, char** argv)
{
    const int64_t n = argc > 1 ? std::atoll(argv[1]) : 4096;
    auto count = cuda::deviceCount();
    if (!count || *count == 0) {
        std::printf("no CUDA device: %s\n", count ? "0 devices" : count.message().c_str());
        return 2;
    }
    auto spec = parseTargetSpec("cuda:0");
    auto target = cuda::createCudaTarget(*spec);
    if (!target) {
        std::printf("%s\n", target.message().c_str());
        return 2;
    }
    std::printf("%s\n\n1. golden kernels vs CPU golden\n", (*target)->describe().c_str());
    bool ok = checkBitExact(**target);

    CK(cudaSetDevice(0));
    cublasHandle_t h;
    CK(cublasCreate(&h));
    CK(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    const size_t nn = size_t(n) * size_t(n);
    float* a = deviceRandom(nn, 1);
    float* b = deviceRandom(nn, 2);
    float *ref = nullptr, *out = nullptr;
    CK(cudaMalloc(&ref, nn * 4));
    CK(cudaMalloc(&out, nn * 4));
    const float one = 1.0f, zero = 0.0f;
    auto sgemm = [&](float* d) {
        CK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, b, int(n), a, int(n), &zero,
                       d, int(n)));
    };

    std::printf("\n2. cuBLAS SGEMM determinism (%lld^3, pedantic math, 100 repetitions)\n", (long long)n);
    sgemm(ref);
    int differing = 0;
    for (int rep = 0; rep < 100; ++rep) {
        sgemm(out);
        auto s = cuda::compareOnDevice(0, ref, out, {uint64_t(n), uint64_t(n)}, cuda::kCompareTile, nullptr,
                                       nullptr);
        if (!s) {
            std::printf("  %s\n", s.message().c_str());
            return 1;
        }
        differing += s->mismatched != 0;
    }
    std::printf("  %d of 100 repetitions differ from the first: %s\n", differing,
                differing ? "NOT DETERMINISTIC" : "deterministic");
    ok = ok && differing == 0;

    // cuBLASLt through the replay's runner (heuristic algorithm 0, 32 MiB workspace), pedantic
    // FP32 and TF32: every repetition compared on the device with the first.
    cuda::CublasLtRunner lt(0);
    for (bool tf32 : {false, true}) {
        std::printf("\n2%s. cuBLASLt determinism (%lld^3, %s, 100 repetitions)\n", tf32 ? "c" : "b",
                    (long long)n, tf32 ? "32F_FAST_TF32" : "32F_PEDANTIC");
        cuda::CudaOpSettings settings;
        settings.impl = cuda::CudaImpl::CublasLt;
        settings.tf32 = tf32;
        cuda::LtGemm lg;
        lg.m = lg.n = lg.k = n;
        lg.a = a;
        lg.b = b;
        lg.aOffsets = lg.bOffsets = {0};
        auto ltRun = [&](float* d) {
            lg.d = d;
            int code = 0;
            Status st = lt.run(lg, settings, nullptr, &code);
            if (!st) {
                std::printf("  %s\n", st.message().c_str());
                std::exit(1);
            }
        };
        ltRun(ref);
        int ltDiffering = 0;
        for (int rep = 0; rep < 100; ++rep) {
            ltRun(out);
            auto s = cuda::compareOnDevice(0, ref, out, {uint64_t(n), uint64_t(n)}, cuda::kCompareTile,
                                           nullptr, nullptr);
            if (!s) {
                std::printf("  %s\n", s.message().c_str());
                return 1;
            }
            ltDiffering += s->mismatched != 0;
        }
        std::printf("  %d of 100 repetitions differ from the first: %s\n", ltDiffering,
                    ltDiffering ? "NOT DETERMINISTIC" : "deterministic");
        ok = ok && ltDiffering == 0;
    }

    std::printf("\n3. GEMM throughput (%lld^3, FP32, no tensor cores)\n", (long long)n);
    cuda::DeviceGemm g;
    g.m = g.n = g.k = n;
    g.a = a;
    g.b = b;
    g.aRowStride = n;
    g.aColStride = 1;
    g.bRowStride = n;
    g.bColStride = 1;
    g.out = out;
    const double flop = 2.0 * double(n) * double(n) * double(n);
    const double goldenMs = timeMs([&] { CK(cuda::launchGoldenGemm(g, nullptr)); }, 5);
    const double cublasMs = timeMs([&] { sgemm(ref); }, 5);
    const double goldenGf = flop / goldenMs / 1e6, cublasGf = flop / cublasMs / 1e6;
    std::printf("  golden GEMM  %9.0f GFLOP/s\n  cuBLAS SGEMM %9.0f GFLOP/s\n  ratio %.2f (goal >= 0.5)\n",
                goldenGf, cublasGf, goldenGf / cublasGf);

    std::printf("\n4. device-side compare bandwidth\n");
    const size_t big = size_t(1) << 28;  // 1 GiB per operand
    float* x = nullptr;
    float* y = nullptr;
    cuda::CompareAccumulators* acc = nullptr;
    CK(cudaMalloc(&x, big * 4));
    CK(cudaMalloc(&y, big * 4));
    CK(cudaMalloc(&acc, sizeof *acc));
    CK(cudaMemset(x, 0x3c, big * 4));
    CK(cudaMemset(y, 0x3c, big * 4));
    const cuda::View2d v{big / 8192, 8192};
    const double copyMs = timeMs([&] { CK(cudaMemcpy(y, x, big * 4, cudaMemcpyDeviceToDevice)); }, 10);
    const double cmpMs =
        timeMs([&] { CK(cuda::launchCompare(x, y, v, cuda::kCompareTile, nullptr, acc, nullptr)); }, 10);
    // Both move 2 x 4 bytes per element (memcpy: read + write; compare: two reads).
    const double copyGBs = 2.0 * big * 4 / copyMs / 1e6, cmpGBs = 2.0 * big * 4 / cmpMs / 1e6;
    std::printf("  memcpy D2D %8.0f GB/s\n  compare    %8.0f GB/s\n  ratio %.2f (goal >= 0.7)\n", copyGBs,
                cmpGBs, cmpGBs / copyGBs);
    cudaFree(x);
    cudaFree(y);
    cudaFree(acc);
    cudaFree(a);
    cudaFree(b);
    cudaFree(ref);
    cudaFree(out);
    cublasDestroy(h);
    std::printf("\n%s\n", ok ? "ALL CHECKS PASSED" : "SOME CHECKS FAILED");
    return ok ? 0 : 1;
}
