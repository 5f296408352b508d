#include "FlatRange.h"

#include <algorithm>

namespace faultline {

std::optional<uint64_t> checkedElementCount(const std::vector<uint64_t>& dims)
{
    uint64_t n = 1;
    bool overflow = false;
    for (uint64_t d : dims) {
        if (d == 0) return 0;  // an empty dimension makes any other product harmless
        if (n > UINT64_MAX / d)
            overflow = true;
        else
            n *= d;
    }
    if (overflow) return std::nullopt;
    return n;
}

std::vector<HyperslabBox> flatRangeBoxes(const std::vector<uint64_t>& dims, uint64_t first, uint64_t count)
{
    std::vector<HyperslabBox> boxes;
    const size_t rank = dims.size();
    if (rank == 0 || count == 0) return boxes;

    // stride[k]: elements in one step along dimension k.
    std::vector<uint64_t> stride(rank, 1);
    for (size_t k = rank - 1; k > 0; --k) stride[k - 1] = stride[k] * dims[k];

    uint64_t pos = first;
    const uint64_t end = first + count;
    while (pos < end) {
        // The coarsest dimension k at which pos starts a whole step and at least one whole step
        // remains; the innermost dimension (stride 1) always qualifies.
        size_t k = 0;
        while (k + 1 < rank && (pos % stride[k] != 0 || stride[k] > end - pos)) ++k;
        const uint64_t index = (pos / stride[k]) % dims[k];
        const uint64_t steps = std::min(dims[k] - index, (end - pos) / stride[k]);

        HyperslabBox box;
        box.start.resize(rank);
        box.count.resize(rank);
        for (size_t j = 0; j < rank; ++j) {
            if (j < k) {
                box.start[j] = (pos / stride[j]) % dims[j];
                box.count[j] = 1;
            } else if (j == k) {
                box.start[j] = index;
                box.count[j] = steps;
            } else {
                box.start[j] = 0;
                box.count[j] = dims[j];
            }
        }
        boxes.push_back(std::move(box));
        pos += steps * stride[k];
    }
    return boxes;
}

}  // namespace faultline
