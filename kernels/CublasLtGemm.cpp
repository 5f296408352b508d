#include "CublasLtGemm.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "CudaRuntime.h"

namespace faultline::cuda {

LtLayoutPlan ltLayoutPlan(int64_t m, int64_t n, int64_t k, bool transA, bool transB)
{
    auto u = [](int64_t v) { return uint64_t(std::max<int64_t>(v, 0)); };
    auto ld = [](uint64_t rows) { return std::max<uint64_t>(rows, 1); };
    LtLayoutPlan p;
    p.m = u(n);
    p.n = u(m);
    p.k = u(k);
    // Our B, row-major [k, n] (or [n, k] with transB), read column-major: [n, k] (or [k, n]).
    p.a.transpose = transB;
    p.a.rows = transB ? u(k) : u(n);
    p.a.cols = transB ? u(n) : u(k);
    p.a.ld = ld(p.a.rows);
    // Our A, row-major [m, k] (or [k, m]), read column-major: [k, m] (or [m, k]).
    p.b.transpose = transA;
    p.b.rows = transA ? u(m) : u(k);
    p.b.cols = transA ? u(k) : u(m);
    p.b.ld = ld(p.b.rows);
    // D row-major [m, n] read column-major: [n, m].
    p.d.rows = u(n);
    p.d.cols = u(m);
    p.d.ld = ld(p.d.rows);
    return p;
}

Result<LtTypes> ltTypes(DType in, DType out)
{
    LtTypes t;
    if (in == DType::Float32 && out == DType::Float32) return t;
    if (in == DType::BFloat16 || in == DType::Float16) {
        t.ab = in == DType::BFloat16 ? CUDA_R_16BF : CUDA_R_16F;
        if (out == in) {
            t.cd = t.ab;
            return t;
        }
        if (out == DType::Float32) return t;
    }
    return Error{
        "cublaslt replay supports float32 -> float32, bfloat16 -> bfloat16|float32 and "
        "float16 -> float16|float32 gemms, not " +
        std::string(dtypeName(in)) + " -> " + std::string(dtypeName(out))};
}

uint32_t ltAlignment(std::span<const uintptr_t> addresses)
{
    uint32_t align = 256;
    for (uintptr_t a : addresses)
        while (align > 1 && a % align != 0) align /= 2;
    return align;
}

namespace {

cublasComputeType_t computeTypeOf(LtComputeType t)
{
    switch (t) {
        case LtComputeType::F32Pedantic:
            return CUBLAS_COMPUTE_32F_PEDANTIC;
        case LtComputeType::F32FastTf32:
            return CUBLAS_COMPUTE_32F_FAST_TF32;
        case LtComputeType::F32Fast16F:
            return CUBLAS_COMPUTE_32F_FAST_16F;
        case LtComputeType::F32Fast16BF:
            return CUBLAS_COMPUTE_32F_FAST_16BF;
        case LtComputeType::Auto:
        case LtComputeType::F32:
            break;
    }
    return CUBLAS_COMPUTE_32F;
}

std::string statusText(cublasStatus_t s)
{
    return std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s);
}

// The descriptors of one matmul shape, destroyed with it.
struct LtDescriptors {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    ~LtDescriptors()
    {
        if (pref) cublasLtMatmulPreferenceDestroy(pref);
        if (d) cublasLtMatrixLayoutDestroy(d);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (op) cublasLtMatmulDescDestroy(op);
    }
};

}  // namespace

struct CublasLtRunner::State {
    int device = 0;
    cublasLtHandle_t handle = nullptr;
    void* workspace = nullptr;
    uint64_t workspaceBytes = 0;
};

CublasLtRunner::CublasLtRunner(int device) : m_state(std::make_unique<State>())
{
    m_state->device = device;
}

CublasLtRunner::~CublasLtRunner()
{
    cudaFree(m_state->workspace);
    if (m_state->handle) cublasLtDestroy(m_state->handle);
}

Status CublasLtRunner::run(const LtGemm& g, const CudaOpSettings& settings, cudaStream_t stream,
                           int* cudaCode)
{
    State& st = *m_state;
    const std::string where = "cuda:" + std::to_string(st.device) + ": ";
    auto fail = [&](const char* what, cublasStatus_t s) -> Status {
        return Error{where + what + ": " + statusText(s)};
    };
    auto cudaFail = [&](const char* what, int rc) -> Status {
        if (cudaCode) *cudaCode = rc;
        return cudaErrorFor(st.device, what, rc);
    };
    auto types = ltTypes(g.in, g.out);
    if (!types) return Error{where + types.message()};
    const size_t outSize = dtypeSize(g.out), inSize = dtypeSize(g.in);
    const size_t perBatch = size_t(g.m * g.n);
    if (g.batch <= 0 || perBatch == 0) return Status::success();
    if (g.k == 0 && !g.c) {
        // An empty sum: D = 0 (cuBLASLt is not asked to handle k = 0).
        const int rc = int(cudaMemsetAsync(g.d, 0, size_t(g.batch) * perBatch * outSize, stream));
        return rc == 0 ? Status::success() : cudaFail("cudaMemset", rc);
    }
    if (!st.handle) {
        const cublasStatus_t s = cublasLtCreate(&st.handle);
        if (s != CUBLAS_STATUS_SUCCESS) {
            st.handle = nullptr;
            // A context an earlier fault poisoned fails here first: keep its code (sticky check).
            if (cudaCode) *cudaCode = int(cudaPeekAtLastError());
            return fail("cublasLtCreate", s);
        }
    }
    if (settings.workspace > st.workspaceBytes) {
        // The old workspace may still be in use by work queued on the stream.
        int rc = int(cudaStreamSynchronize(stream));
        if (rc == 0) rc = int(cudaFree(st.workspace));
        st.workspace = nullptr;
        st.workspaceBytes = 0;
        if (rc == 0) rc = int(cudaMalloc(&st.workspace, settings.workspace));
        if (rc != 0) return cudaFail("allocating the cuBLASLt workspace", rc);
        st.workspaceBytes = settings.workspace;
    }

    const LtLayoutPlan plan = ltLayoutPlan(g.m, g.n, g.k, g.transA, g.transB);
    const LtComputeType compute = resolveLtComputeType(settings, g.in == DType::Float32);
    LtDescriptors desc;
    cublasStatus_t s = cublasLtMatmulDescCreate(&desc.op, computeTypeOf(compute), CUDA_R_32F);
    const cublasOperation_t opA = plan.a.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opB = plan.b.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulDescSetAttribute(desc.op, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulDescSetAttribute(desc.op, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&desc.a, types->ab, plan.a.rows, plan.a.cols, int64_t(plan.a.ld));
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&desc.b, types->ab, plan.b.rows, plan.b.cols, int64_t(plan.b.ld));
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&desc.d, types->cd, plan.d.rows, plan.d.cols, int64_t(plan.d.ld));
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulPreferenceCreate(&desc.pref);
    const uint64_t wsBytes = settings.workspace;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceSetAttribute(desc.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &wsBytes, sizeof wsBytes);
    if (s != CUBLAS_STATUS_SUCCESS) return fail("describing the matmul", s);

    // Alignment preferences from the addresses every batch uses, so the heuristic only offers
    // algorithms that can run on all of them.
    std::vector<uintptr_t> aAddr, bAddr, dAddr;
    for (int64_t bi = 0; bi < g.batch; ++bi) {
        aAddr.push_back(uintptr_t(g.b) + uintptr_t(g.bOffsets[size_t(bi)]) * inSize);  // cuBLASLt's A = our B
        bAddr.push_back(uintptr_t(g.a) + uintptr_t(g.aOffsets[size_t(bi)]) * inSize);
        dAddr.push_back(uintptr_t(g.d) + uintptr_t(bi) * perBatch * outSize);
        if (g.c) dAddr.push_back(uintptr_t(g.c) + uintptr_t(bi) * perBatch * outSize);
    }
    const uint32_t alignA = ltAlignment(aAddr), alignB = ltAlignment(bAddr), alignD = ltAlignment(dAddr);
    for (auto [attr, value] : {std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignA},
                               std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignB},
                               std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignD},
                               std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignD}}) {
        if (s == CUBLAS_STATUS_SUCCESS)
            s = cublasLtMatmulPreferenceSetAttribute(desc.pref, attr, &value, sizeof value);
    }
    if (s != CUBLAS_STATUS_SUCCESS) return fail("setting the heuristic preferences", s);

    constexpr int64_t kMaxHeuristics = 128;
    if (settings.algo >= kMaxHeuristics)
        return Error{where + "cublaslt: algo=" + std::to_string(settings.algo) + " is beyond the " +
                     std::to_string(kMaxHeuristics) + " heuristic entries this replay asks for"};
    const int requested = int(settings.algo + 1);
    std::vector<cublasLtMatmulHeuristicResult_t> heuristics(static_cast<size_t>(requested));
    int returned = 0;
    s = cublasLtMatmulAlgoGetHeuristic(st.handle, desc.op, desc.a, desc.b, desc.d, desc.d, desc.pref,
                                       requested, heuristics.data(), &returned);
    if (s != CUBLAS_STATUS_SUCCESS) return fail("cublasLtMatmulAlgoGetHeuristic", s);
    if (returned <= settings.algo)
        return Error{where + "cublaslt: algo=" + std::to_string(settings.algo) +
                     " but the heuristic offers " + std::to_string(returned) +
                     " algorithm(s) for this gemm (compute type " + ltComputeTypeName(compute) +
                     ", workspace " + std::to_string(wsBytes) + " bytes)"};
    const cublasLtMatmulAlgo_t& algo = heuristics[size_t(settings.algo)].algo;

    const float beta = g.c ? g.beta : 0.0f;
    for (int64_t bi = 0; bi < g.batch; ++bi) {
        const auto* a = static_cast<const char*>(g.b) + size_t(g.bOffsets[size_t(bi)]) * inSize;
        const auto* b = static_cast<const char*>(g.a) + size_t(g.aOffsets[size_t(bi)]) * inSize;
        void* d = static_cast<char*>(g.d) + size_t(bi) * perBatch * outSize;
        const void* c = g.c ? static_cast<const char*>(g.c) + size_t(bi) * perBatch * outSize : d;
        s = cublasLtMatmul(st.handle, desc.op, &g.alpha, a, desc.a, b, desc.b, &beta, c, desc.d, d, desc.d,
                           &algo, st.workspace, settings.workspace, stream);
        if (s != CUBLAS_STATUS_SUCCESS) {
            const int rc = int(cudaPeekAtLastError());
            if (rc != 0) return cudaFail("cublasLtMatmul", rc);
            return fail("cublasLtMatmul", s);
        }
    }
    return Status::success();
}

}  // namespace faultline::cuda
