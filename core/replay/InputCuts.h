#pragma once
// Cutting an op's inputs down, for `faultline shrink` (fewer rows, columns, smaller k, parts set
// to a constant) and `faultline explore` (sub-blocks): the dimensions of the op that can be cut
// and the input axes that carry each, so one cut keeps the inputs consistent (gemm's k is a
// column of A and a row of B; an element-wise op's rows are every input's rows).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../HostTensor.h"
#include "../trace/Trace.h"

namespace faultline {

struct InputAxis {
    // gemm: "rows" (m), "cols" (n), "k", "batch<i>"; other ops, by input 0's dimensions from the
    // right: "cols" (the last, the inner dimension triggers read), "rows", "dim<i>".
    std::string name;
    std::vector<std::pair<size_t, size_t>> places;  // (input position, axis of that input)
};

// The axes of `op` with more than one index (nothing to cut otherwise). gemm by its operands
// (trans_a, trans_b; C where its dimensions are m and n); other ops by numpy's right-aligned
// broadcasting: an axis of input 0 and the axes of the other inputs aligned with it that have
// its size.
std::vector<InputAxis> inputAxes(const TraceOp& op, const std::vector<HostTensor>& inputs);

// The size of `axis` in `inputs` (its first place's).
uint64_t axisSize(const InputAxis& axis, const std::vector<HostTensor>& inputs);

// `t` with only the indices `keep` (ascending, below the axis' size) of dimension `dim`.
HostTensor keepAlong(const HostTensor& t, size_t dim, const std::vector<uint64_t>& keep);
// Every input with only the indices `keep` of `axis`.
std::vector<HostTensor> keepAlong(const std::vector<HostTensor>& inputs, const InputAxis& axis,
                                  const std::vector<uint64_t>& keep);

// Elements [first, first + count) of `t` (floating point) set to +0.
void zeroElements(HostTensor& t, uint64_t first, uint64_t count);
// How many elements of `t` are +0 or -0 (floating point; 0 for other dtypes).
uint64_t zeroElementCount(const HostTensor& t);

// The elements of the op's inputs, each tensor counted once (inputs with one id are one tensor).
uint64_t inputElementCount(const TraceOp& op, const std::vector<HostTensor>& inputs);

// Parameters that describe the recorded inputs' layout (gemm's a_strides, b_strides): dropped
// from an op whose inputs were cut, since they no longer hold.
void dropLayoutParams(TraceOp& op);

}  // namespace faultline
