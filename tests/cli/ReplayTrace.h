#pragma once
// The small trace the replay CLI tests run: ops 0 gemm [32,48]x[48,24], 1 softmax [16,40],
// 2 add, 3 gemm (the same as 0), on standard-normal inputs. Device gpu0 (role reference)
// recorded a healthy implementation with another summation order than the golden model (double
// precision, rounded once); gpu1 (suspect) the same, with element 5 of op `corruptOp`'s output
// given a flipped exponent bit (none when < 0).
#include <QString>
#include <cmath>
#include <cstring>

#include "core/trace/TraceWriter.h"
#include "support/TestSupport.h"

namespace faultline::test {

// The same ops computed in double precision and rounded once: a healthy implementation with a
// different summation order than the golden model.
inline HostTensor gemmDouble(const HostTensor& a, const HostTensor& b)
{
    const uint64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
    HostTensor d(DType::Float32, {m, n});
    for (uint64_t i = 0; i < m; ++i)
        for (uint64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (uint64_t p = k; p-- > 0;) acc += double(a.as<float>()[i * k + p]) * b.as<float>()[p * n + j];
            d.as<float>()[i * n + j] = float(acc);
        }
    return d;
}

inline HostTensor softmaxDouble(const HostTensor& x)
{
    const uint64_t rows = x.shape[0], cols = x.shape[1];
    HostTensor y(DType::Float32, x.shape);
    for (uint64_t r = 0; r < rows; ++r) {
        double mx = -INFINITY, sum = 0;
        for (uint64_t c = 0; c < cols; ++c) mx = std::max(mx, double(x.as<float>()[r * cols + c]));
        for (uint64_t c = 0; c < cols; ++c) sum += std::exp(double(x.as<float>()[r * cols + c]) - mx);
        for (uint64_t c = 0; c < cols; ++c)
            y.as<float>()[r * cols + c] = float(std::exp(double(x.as<float>()[r * cols + c]) - mx) / sum);
    }
    return y;
}

inline HostTensor addDouble(const HostTensor& x, const HostTensor& y)
{
    HostTensor z(DType::Float32, x.shape);
    for (uint64_t i = 0; i < x.elementCount(); ++i) z.as<float>()[i] = x.as<float>()[i] + y.as<float>()[i];
    return z;
}

inline QString makeReplayTrace(const QString& path, int corruptOp = -1)
{
    const HostTensor a = randomNormalTensor({32, 48}, 1), b = randomNormalTensor({48, 24}, 2),
                     x = randomNormalTensor({16, 40}, 3), y = randomNormalTensor({16, 40}, 4);
    auto w = TraceWriter::create(path.toStdString());
    if (!w) return QString::fromStdString(w.message());
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = s;
    };
    check(w->addDevice({"gpu0", "healthy", "", "", "", "", "reference", {}}));
    check(w->addDevice({"gpu1", "suspect", "", "", "", "", "suspect", {}}));
    check(w->addTensor("a", {a.dtype, a.shape, a.data.data()}));
    check(w->addTensor("b", {b.dtype, b.shape, b.data.data()}));
    check(w->addTensor("x", {x.dtype, x.shape, x.data.data()}));
    check(w->addTensor("y", {y.dtype, y.shape, y.data.data()}));
    const HostTensor outs[4] = {gemmDouble(a, b), softmaxDouble(x), addDouble(x, y), gemmDouble(a, b)};
    const char* kinds[4] = {"gemm", "softmax", "add", "gemm"};
    const std::vector<std::string> inputs[4] = {{"a", "b"}, {"x"}, {"x", "y"}, {"a", "b"}};
    for (int i = 0; i < 4; ++i) {
        HostTensor suspect = outs[i];
        if (i == corruptOp) {
            uint32_t bits;
            std::memcpy(&bits, suspect.data.data() + 20, 4);
            bits ^= 1u << 27;
            std::memcpy(suspect.data.data() + 20, &bits, 4);
        }
        TraceOp op;
        op.index = size_t(i);
        op.op = kinds[i];
        op.name = "layer." + std::to_string(i);
        op.inputs = inputs[i];
        check(w->addOp(op, {{"gpu0", {{outs[i].dtype, outs[i].shape, outs[i].data.data()}}},
                            {"gpu1", {{suspect.dtype, suspect.shape, suspect.data.data()}}}}));
    }
    check(w->close());
    return st ? QString() : QString::fromStdString(st.message());
}

}  // namespace faultline::test
