#pragma once
// Golden all_gather, broadcast and reduce_scatter (trace v1, docs/formats.md), and which part of
// a collective's golden output each rank records:
//   all_gather      [x_rank0, x_rank1, ...] same shape (at least one dimension) and dtype;
//                   every rank's output is the inputs concatenated in rank order along dim 0,
//                   [R d0, ...]. Bytes move unchanged: exact, judged bit for bit (bound 0).
//   broadcast       [x_rank0, x_rank1, ...] each rank's buffer before the call, same shape and
//                   dtype; root (rank index, default 0): every rank's output is inputs[root]'s
//                   bytes. Exact, bound 0.
//   reduce_scatter  [x_rank0, x_rank1, ...] same shape and dtype, dim 0 divisible by R;
//                   reduce_op sum (default) | max | min. The golden output is the whole
//                   element-wise reduction in all_reduce's rank order (AllReduceGolden.h), with
//                   all_reduce's bound; rank r records block r of it along dim 0.
// `ranks` (device labels in rank order, one per input) names the ranks, as for all_reduce.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "GoldenSupport.h"

namespace faultline::golden {

// True for the ops whose inputs are one tensor per rank: all_reduce, all_gather,
// reduce_scatter, broadcast.
bool isCollectiveOp(std::string_view op);
// True for the collectives that move bytes without arithmetic (all_gather, broadcast).
bool isDataMovementOp(std::string_view op);

// The rank labels of the op's `ranks` parameter (empty when absent or not a string list).
std::vector<std::string> rankLabels(const OpParams& params);

// The inputs concatenated along dim 0, bytes copied (inputs validated by the caller).
HostTensor concatenateRows(std::span<const HostTensor> parts);

// Rows [begin, begin + count) along dim 0: the slice of `t` and of a per-element vector of t's
// shape (such as a bound).
struct RowBlock {
    uint64_t begin = 0, count = 0;
};
HostTensor rowsOf(const HostTensor& t, RowBlock rows);
std::vector<double> rowsOf(std::span<const double> values, std::span<const uint64_t> shape, RowBlock rows);

// The rows of an op's golden output (of shape `goldenShape`) that device `label` records:
// reduce_scatter's rank r records block r; nullopt for every other op (the whole output). An
// error when the label is not one of reduce_scatter's ranks.
Result<std::optional<RowBlock>> recordedRowsOf(std::string_view op, const OpParams& params,
                                               std::string_view label, std::span<const uint64_t> goldenShape);

}  // namespace faultline::golden
