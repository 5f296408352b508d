#pragma once
// Collectives on three ranks g0, g1, g2 for the invariant and merge-traces tests:
//   op 0 all_reduce sum of standard-normal [4, 8] inputs (every rank holds the golden sum)
//   op 1 all_gather of [2, 5] inputs (every rank holds the three inputs, rank order)
//   op 2 reduce_scatter sum of integer-valued [6, 4] inputs (rank r holds rows 2r, 2r+1: exact)
//   op 3 broadcast from root 1 of [7] buffers
// with one planted fault (Plant), and, per rank, the file a capture writes (writeRankTrace):
// a non-collective add of its own first, then the collectives with every rank's inputs and its
// own output only, tensor ids that collide across the rank files.
#include <QString>
#include <cstring>
#include <vector>

#include "core/golden/OpRegistry.h"
#include "core/trace/TraceWriter.h"
#include "support/TestSupport.h"

namespace faultline::test {

enum class Plant {
    None,
    AllReduceRank2,       // rank 2's all_reduce output: exponent bit 27 of element 3 flipped
    GatherBlock2OnRank0,  // rank 0's all_gather output: a byte of rank 2's block changed
    ScatterLastBitRank1,  // rank 1's reduce_scatter block: the lowest mantissa bit of element 1
    BroadcastRank0        // rank 0's broadcast output: element 6 negated
};

struct CollectiveCase {
    std::vector<std::string> labels{"g0", "g1", "g2"};
    const char* kinds[4] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast"};
    std::vector<HostTensor> inputs[4];
    golden::OpParams params[4];
    std::vector<HostTensor> outputs[4];  // per rank

    explicit CollectiveCase(Plant plant)
    {
        for (size_t r = 0; r < 3; ++r) {
            inputs[0].push_back(randomNormalTensor({4, 8}, 10 + r));
            inputs[1].push_back(randomNormalTensor({2, 5}, 20 + r));
            HostTensor integers = randomNormalTensor({6, 4}, 30 + r);
            for (uint64_t i = 0; i < integers.elementCount(); ++i)
                integers.as<float>()[i] = std::round(integers.as<float>()[i] * 1000.0f);
            inputs[2].push_back(integers);
            inputs[3].push_back(randomNormalTensor({7}, 40 + r));
        }
        for (int k = 0; k < 4; ++k) params[k]["ranks"] = labels;
        params[0]["reduce_op"] = std::string("sum");
        params[2]["reduce_op"] = std::string("sum");
        params[3]["root"] = int64_t(1);
        for (int k = 0; k < 4; ++k) {
            const HostTensor whole = golden::runGolden(kinds[k], inputs[k], params[k]).value();
            for (size_t r = 0; r < 3; ++r) {
                if (k != 2) {
                    outputs[k].push_back(whole);
                    continue;
                }
                HostTensor block(DType::Float32, {2, 4});
                std::memcpy(block.data.data(), whole.data.data() + r * block.byteCount(), block.byteCount());
                outputs[k].push_back(block);
            }
        }
        auto flip = [](HostTensor& t, size_t element, uint32_t mask) {
            uint32_t bits;
            std::memcpy(&bits, t.data.data() + element * 4, 4);
            bits ^= mask;
            std::memcpy(t.data.data() + element * 4, &bits, 4);
        };
        if (plant == Plant::AllReduceRank2) flip(outputs[0][2], 3, 1u << 27);
        if (plant == Plant::GatherBlock2OnRank0) flip(outputs[1][0], 2 * 10 + 4, 0x00ff0000u);
        if (plant == Plant::ScatterLastBitRank1) flip(outputs[2][1], 1, 1u);
        if (plant == Plant::BroadcastRank0) flip(outputs[3][0], 6, 0x80000000u);
    }
};

inline TensorData dataOf(const HostTensor& t)
{
    return {t.dtype, t.shape, t.data.data()};
}

// One trace holding every rank's output of every collective.
inline QString writeMergedTrace(const QString& path, const CollectiveCase& c)
{
    auto w = TraceWriter::create(path.toStdString());
    if (!w) return QString::fromStdString(w.message());
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = s;
    };
    for (const std::string& l : c.labels) check(w->addDevice({l, "sim", "", "", "", "", "", {}}));
    for (int k = 0; k < 4; ++k) {
        TraceOp op;
        op.index = size_t(k);
        op.op = c.kinds[k];
        op.params = c.params[k];
        std::map<std::string, std::vector<TensorData>> outs;
        for (size_t r = 0; r < 3; ++r) {
            const std::string id = "op" + std::to_string(k) + "/x" + std::to_string(r);
            check(w->addTensor(id, dataOf(c.inputs[k][r])));
            op.inputs.push_back(id);
            outs[c.labels[r]] = {dataOf(c.outputs[k][r])};
        }
        check(w->addOp(op, outs));
    }
    check(w->close());
    return st ? QString() : QString::fromStdString(st.message());
}

// What rank `rank`'s capture writes: its device, an add of its own (op 0), then the four
// collectives (ops 1..4) with every rank's inputs and its own output. `dropLast` leaves the
// broadcast out; `reduceOp` replaces the all_reduce's reduce_op.
inline QString writeRankTrace(const QString& path, const CollectiveCase& c, size_t rank,
                              bool dropLast = false, const std::string& reduceOp = "sum")
{
    auto w = TraceWriter::create(path.toStdString());
    if (!w) return QString::fromStdString(w.message());
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = s;
    };
    const std::string& label = c.labels[rank];
    check(w->addDevice({label, "sim", "uuid-" + label, "", "", "", "", {}}));
    check(w->setAttribute("rank", int64_t(rank)));
    const HostTensor x = randomNormalTensor({3, 3}, 50 + rank);
    HostTensor sum(DType::Float32, {3, 3});
    for (uint64_t i = 0; i < 9; ++i) sum.as<float>()[i] = x.as<float>()[i] + x.as<float>()[i];
    check(w->addTensor("t0", dataOf(x)));
    TraceOp add;
    add.index = 0;
    add.op = "add";
    add.name = "layer.add";
    add.inputs = {"t0", "t0"};
    check(w->addOp(add, {{label, {dataOf(sum)}}}));
    for (int k = 0; k < (dropLast ? 3 : 4); ++k) {
        TraceOp op;
        op.index = size_t(k + 1);
        op.op = c.kinds[k];
        op.params = c.params[k];
        if (k == 0) op.params["reduce_op"] = reduceOp;
        for (size_t r = 0; r < 3; ++r) {
            const std::string id = "t" + std::to_string(1 + k * 3 + int(r));
            check(w->addTensor(id, dataOf(c.inputs[k][r])));
            op.inputs.push_back(id);
        }
        check(w->addOp(op, {{label, {dataOf(c.outputs[k][rank])}}}));
    }
    check(w->close());
    return st ? QString() : QString::fromStdString(st.message());
}

}  // namespace faultline::test
