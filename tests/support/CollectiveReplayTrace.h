#pragma once
// A trace of collectives for the collective replay tests, written with TraceWriter:
//   op 0 all_reduce sum   float32 [64, 32], standard-normal inputs (judged within the bound)
//   op 1 all_gather       float32 [16, 32]
//   op 2 gemm             (not a collective: skipped with a warning when selected)
//   op 3 reduce_scatter   sum of integer-valued float32 [8*ranks, 16] (exact: judged bitwise)
//   op 4 broadcast        float32 [40, 24] from root 3 (or rank 0 in groups of fewer ranks)
//   op 5 all_reduce max   float32 [32, 16]
// `ranks` inputs each; `badRanks` > 0 gives op 1 that many inputs instead (a bad setup).
#include <string>
#include <vector>

#include "core/trace/TraceWriter.h"
#include "support/TestSupport.h"

namespace faultline::test {

inline std::string writeCollectiveTrace(const std::string& path, size_t ranks, size_t badRanks = 0)
{
    auto w = TraceWriter::create(path);
    if (!w) return w.message();
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = s;
    };
    std::vector<std::string> labels;
    for (size_t r = 0; r < ranks; ++r) {
        labels.push_back("gpu" + std::to_string(r));
        check(w->addDevice({labels.back(), "rank " + std::to_string(r), "", "", "", "", "", {}}));
    }
    auto addOp = [&](size_t index, const std::string& kind, const std::vector<uint64_t>& shape, size_t inputs,
                     bool integers, std::map<std::string, AttrValue> params) {
        TraceOp op;
        op.index = index;
        op.op = kind;
        op.name = "model.layers." + std::to_string(index) + "." + kind;
        std::vector<std::string> used(labels.begin(), labels.begin() + std::min(inputs, labels.size()));
        while (used.size() < inputs) used.push_back("gpu0");
        for (size_t r = 0; r < inputs; ++r) {
            HostTensor t = randomNormalTensor(shape, 1000 * index + r);
            if (integers)
                for (uint64_t i = 0; i < t.elementCount(); ++i)
                    t.as<float>()[i] = float(int(t.as<float>()[i] * 8));
            const std::string id = "op" + std::to_string(index) + "_rank" + std::to_string(r);
            check(w->addTensor(id, {t.dtype, t.shape, t.data.data()}));
            op.inputs.push_back(id);
        }
        params["ranks"] = used;
        op.params = std::move(params);
        check(w->addOp(op));
    };
    addOp(0, "all_reduce", {64, 32}, ranks, false, {{"reduce_op", std::string("sum")}});
    addOp(1, "all_gather", {16, 32}, badRanks ? badRanks : ranks, false, {});
    {
        const HostTensor a = randomNormalTensor({8, 8}, 7), b = randomNormalTensor({8, 8}, 8);
        check(w->addTensor("a", {a.dtype, a.shape, a.data.data()}));
        check(w->addTensor("b", {b.dtype, b.shape, b.data.data()}));
        TraceOp gemm;
        gemm.index = 2;
        gemm.op = "gemm";
        gemm.inputs = {"a", "b"};
        check(w->addOp(gemm));
    }
    addOp(3, "reduce_scatter", {8 * ranks, 16}, ranks, true, {{"reduce_op", std::string("sum")}});
    addOp(4, "broadcast", {40, 24}, ranks, false, {{"root", int64_t(ranks > 3 ? 3 : 0)}});
    addOp(5, "all_reduce", {32, 16}, ranks, false, {{"reduce_op", std::string("max")}});
    if (!st) return st.message();
    if (Status c = w->close(); !c) return c.message();
    return "";
}

}  // namespace faultline::test
