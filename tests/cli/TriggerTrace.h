#pragma once
// The trace the shrink and explore CLI tests run simulated defects with triggers on: op 0 gemm
// [48,512]x[512,40] (k = 512), op 1 gemm [64,32]x[32,64] (an output of 8x8 tiles of 8), op 2 gemm
// [32,48]x[48,24] whose A holds one element of 40 (the rest standard normal, below 6), op 3 add
// of two [16,40] tensors whose x holds one element of -30. No recorded outputs.
#include <QString>

#include "core/trace/TraceWriter.h"
#include "support/TestSupport.h"

namespace faultline::test {

inline QString makeTriggerTrace(const QString& path)
{
    HostTensor a0 = randomNormalTensor({48, 512}, 11), b0 = randomNormalTensor({512, 40}, 12);
    HostTensor a1 = randomNormalTensor({64, 32}, 13), b1 = randomNormalTensor({32, 64}, 14);
    HostTensor a2 = randomNormalTensor({32, 48}, 15), b2 = randomNormalTensor({48, 24}, 16);
    HostTensor x3 = randomNormalTensor({16, 40}, 17), y3 = randomNormalTensor({16, 40}, 18);
    a2.as<float>()[7 * 48 + 30] = 40.0f;
    x3.as<float>()[9 * 40 + 3] = -30.0f;
    auto w = TraceWriter::create(path.toStdString());
    if (!w) return QString::fromStdString(w.message());
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = s;
    };
    check(w->setAttribute("model", std::string("trigger-fixture")));
    check(w->addDevice({"gpu0", "suspect", "", "", "", "", "suspect", {}}));
    const std::pair<const char*, const HostTensor*> tensors[] = {{"a0", &a0}, {"b0", &b0}, {"a1", &a1},
                                                                 {"b1", &b1}, {"a2", &a2}, {"b2", &b2},
                                                                 {"x3", &x3}, {"y3", &y3}};
    for (const auto& [id, t] : tensors) check(w->addTensor(id, {t->dtype, t->shape, t->data.data()}));
    const char* kinds[4] = {"gemm", "gemm", "gemm", "add"};
    const std::vector<std::string> inputs[4] = {{"a0", "b0"}, {"a1", "b1"}, {"a2", "b2"}, {"x3", "y3"}};
    for (int i = 0; i < 4; ++i) {
        TraceOp op;
        op.index = size_t(i);
        op.op = kinds[i];
        op.name = "layer." + std::to_string(i);
        op.inputs = inputs[i];
        check(w->addOp(op));
    }
    check(w->close());
    return st ? QString() : QString::fromStdString(st.message());
}

}  // namespace faultline::test
