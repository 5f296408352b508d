#pragma once
// The element values of one entry, both sides, for the heatmap's finest zoom and its hover:
// small tensors only (ElementValueLoader::kMaxElements). Ops: the suspect's recorded output and
// the golden model's; tensors: the suspect and the reference snapshot.
#include <QString>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/Convert.h"
#include "core/DType.h"

namespace faultline::views {

struct ElementValues {
    int entryId = -1;
    DType dtype = DType::Float32;
    uint64_t rows = 0, cols = 0;           // the 2-D view (last dimension = columns)
    QString suspectLabel, referenceLabel;  // "gpu1 (recorded)", "golden model"
    std::vector<double> suspect, reference;
    std::vector<std::byte> suspectRaw, referenceRaw;  // little-endian elements of dtype

    uint64_t elements() const { return rows * cols; }
    uint64_t suspectBits(uint64_t i) const { return loadBits(dtype, suspectRaw.data(), size_t(i)); }
    uint64_t referenceBits(uint64_t i) const { return loadBits(dtype, referenceRaw.data(), size_t(i)); }
    bool differs(uint64_t i) const { return suspectBits(i) != referenceBits(i); }
};

}  // namespace faultline::views
