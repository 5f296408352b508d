#pragma once
// A flat row-major element range of an N-d array as a few rectangular boxes, so that HDF5 can
// read (or write) exactly that range through one hyperslab selection, in bounded memory, from
// contiguous, chunked and compressed datasets alike. No HDF5 here: pure arithmetic.
#include <cstdint>
#include <optional>
#include <vector>

namespace faultline {

struct HyperslabBox {
    std::vector<uint64_t> start;  // per dimension
    std::vector<uint64_t> count;  // per dimension
};

// Boxes whose union is exactly elements [first, first + count) of an array shaped `dims`, in
// increasing row-major order, at most 2·rank − 1 of them. The caller guarantees
// first + count <= product(dims) and that the product fits in 64 bits. Empty for count == 0 or
// rank 0 (a scalar: select all).
std::vector<HyperslabBox> flatRangeBoxes(const std::vector<uint64_t>& dims, uint64_t first, uint64_t count);

// product(dims), or nullopt when it does not fit in 64 bits.
std::optional<uint64_t> checkedElementCount(const std::vector<uint64_t>& dims);

}  // namespace faultline
