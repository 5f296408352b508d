#include "InputCuts.h"

#include <cstring>
#include <map>

#include "../golden/GoldenSupport.h"

namespace faultline {
namespace {

void addPlace(InputAxis& axis, const std::vector<HostTensor>& inputs, size_t input, size_t dim, uint64_t size)
{
    if (input < inputs.size() && dim < inputs[input].shape.size() && inputs[input].shape[dim] == size)
        axis.places.emplace_back(input, dim);
}

std::vector<InputAxis> gemmAxes(const TraceOp& op, const std::vector<HostTensor>& in)
{
    if (in.size() < 2 || in[0].shape.size() < 2 || in[1].shape.size() < 2) return {};
    const Result<bool> transA = golden::paramBool("gemm", op.params, "trans_a", false);
    const Result<bool> transB = golden::paramBool("gemm", op.params, "trans_b", false);
    const bool ta = transA && *transA, tb = transB && *transB;
    const size_t ra = in[0].shape.size(), rb = in[1].shape.size();
    const size_t aRow = ta ? ra - 1 : ra - 2, aK = ta ? ra - 2 : ra - 1;
    const size_t bK = tb ? rb - 1 : rb - 2, bCol = tb ? rb - 2 : rb - 1;
    const uint64_t m = in[0].shape[aRow], k = in[0].shape[aK], n = in[1].shape[bCol];
    if (in[1].shape[bK] != k) return {};
    std::vector<InputAxis> axes;
    InputAxis rows{"rows", {}}, cols{"cols", {}}, inner{"k", {}};
    addPlace(rows, in, 0, aRow, m);
    addPlace(cols, in, 1, bCol, n);
    addPlace(inner, in, 0, aK, k);
    addPlace(inner, in, 1, bK, k);
    // C: [..., m, n], or broadcast along either (a size-1 or missing dimension is left whole).
    if (in.size() > 2) {
        const size_t rc = in[2].shape.size();
        if (rc >= 2) addPlace(rows, in, 2, rc - 2, m);
        if (rc >= 1) addPlace(cols, in, 2, rc - 1, n);
    }
    for (InputAxis* a : {&rows, &cols, &inner})
        if (axisSize(*a, in) > 1) axes.push_back(*a);
    // Batch dimensions, aligned from the right across A, B and C.
    const size_t batchA = ra - 2;
    for (size_t i = 0; i < batchA; ++i) {
        const uint64_t size = in[0].shape[i];
        if (size < 2) continue;
        InputAxis batch{"batch" + std::to_string(i), {{0, i}}};
        const size_t fromRight = ra - 1 - i;
        for (size_t j = 1; j < in.size(); ++j)
            if (in[j].shape.size() > fromRight)
                addPlace(batch, in, j, in[j].shape.size() - 1 - fromRight, size);
        axes.push_back(std::move(batch));
    }
    return axes;
}

}  // namespace

std::vector<InputAxis> inputAxes(const TraceOp& op, const std::vector<HostTensor>& inputs)
{
    if (inputs.empty()) return {};
    if (op.op == "gemm") return gemmAxes(op, inputs);
    std::vector<InputAxis> axes;
    const size_t rank = inputs[0].shape.size();
    for (size_t d = 0; d < rank; ++d) {
        const uint64_t size = inputs[0].shape[d];
        if (size < 2) continue;
        const size_t fromRight = rank - 1 - d;
        InputAxis axis{fromRight == 0 ? "cols" : fromRight == 1 ? "rows" : "dim" + std::to_string(d), {}};
        for (size_t j = 0; j < inputs.size(); ++j)
            if (inputs[j].shape.size() > fromRight)
                addPlace(axis, inputs, j, inputs[j].shape.size() - 1 - fromRight, size);
        axes.push_back(std::move(axis));
    }
    return axes;
}

uint64_t axisSize(const InputAxis& axis, const std::vector<HostTensor>& inputs)
{
    if (axis.places.empty()) return 0;
    const auto [input, dim] = axis.places.front();
    return inputs[input].shape[dim];
}

HostTensor keepAlong(const HostTensor& t, size_t dim, const std::vector<uint64_t>& keep)
{
    std::vector<uint64_t> shape = t.shape;
    const uint64_t size = shape[dim];
    shape[dim] = keep.size();
    HostTensor out(t.dtype, shape);
    uint64_t outer = 1, inner = dtypeSize(t.dtype);
    for (size_t i = 0; i < dim; ++i) outer *= t.shape[i];
    for (size_t i = dim + 1; i < t.shape.size(); ++i) inner *= t.shape[i];
    std::byte* to = out.data.data();
    for (uint64_t o = 0; o < outer; ++o) {
        const std::byte* from = t.data.data() + o * size * inner;
        for (uint64_t index : keep) {
            std::memcpy(to, from + index * inner, size_t(inner));
            to += inner;
        }
    }
    return out;
}

std::vector<HostTensor> keepAlong(const std::vector<HostTensor>& inputs, const InputAxis& axis,
                                  const std::vector<uint64_t>& keep)
{
    std::vector<HostTensor> out = inputs;
    for (const auto& [input, dim] : axis.places) out[input] = keepAlong(inputs[input], dim, keep);
    return out;
}

void zeroElements(HostTensor& t, uint64_t first, uint64_t count)
{
    if (!isFloatingPoint(t.dtype)) return;
    const unsigned size = dtypeSize(t.dtype);
    // +0 is all bits clear in every floating-point dtype.
    std::memset(t.data.data() + first * size, 0, size_t(count * size));
}

uint64_t zeroElementCount(const HostTensor& t)
{
    if (!isFloatingPoint(t.dtype)) return 0;
    const unsigned size = dtypeSize(t.dtype);
    const uint64_t sign = uint64_t(1) << (8 * size - 1);
    uint64_t zeros = 0;
    for (uint64_t i = 0, n = t.elementCount(); i < n; ++i) zeros += (elementBits(t, i) & ~sign) == 0 ? 1 : 0;
    return zeros;
}

uint64_t inputElementCount(const TraceOp& op, const std::vector<HostTensor>& inputs)
{
    std::map<std::string, uint64_t> perId;
    for (size_t i = 0; i < inputs.size(); ++i)
        perId[i < op.inputs.size() ? op.inputs[i] : "#" + std::to_string(i)] = inputs[i].elementCount();
    uint64_t total = 0;
    for (const auto& [id, n] : perId) total += n;
    return total;
}

void dropLayoutParams(TraceOp& op)
{
    for (const char* name : {"a_strides", "b_strides"}) op.params.erase(name);
}

}  // namespace faultline
