#pragma once
// The element values of one entry, both sides, in a window of the 2-D view, for the heatmap's
// finest zoom and its readout: any tensor size, read around the viewport on demand
// (ElementValueLoader). Ops: the suspect's recorded output and the golden model's (or the
// peer's); tensors: the suspect and the reference snapshot.
#include <QString>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/Convert.h"
#include "core/DType.h"

namespace faultline::views {

// Element rows [rowBegin, rowEnd) x cols [colBegin, colEnd) of a 2-D view.
struct ElementWindow {
    uint64_t rowBegin = 0, rowEnd = 0;
    uint64_t colBegin = 0, colEnd = 0;

    uint64_t elements() const { return (rowEnd - rowBegin) * (colEnd - colBegin); }
    bool contains(const ElementWindow& w) const
    {
        return w.rowBegin >= rowBegin && w.rowEnd <= rowEnd && w.colBegin >= colBegin && w.colEnd <= colEnd;
    }
    bool operator==(const ElementWindow&) const = default;
};

struct ElementValues {
    int entryId = -1;
    DType dtype = DType::Float32;
    uint64_t rows = 0, cols = 0;           // the whole 2-D view (last dimension = columns)
    ElementWindow window;                  // what is held: values are window-sized, row-major
    QString suspectLabel, referenceLabel;  // "gpu1 (recorded)", "golden model"
    std::vector<double> suspect, reference;
    std::vector<std::byte> suspectRaw, referenceRaw;  // little-endian elements of dtype

    uint64_t held() const { return window.elements(); }
    bool holds(uint64_t row, uint64_t col) const
    {
        return row >= window.rowBegin && row < window.rowEnd && col >= window.colBegin && col < window.colEnd;
    }
    // Index into the held vectors of element (row, col), which holds() must accept.
    size_t indexOf(uint64_t row, uint64_t col) const
    {
        return size_t((row - window.rowBegin) * (window.colEnd - window.colBegin) + (col - window.colBegin));
    }
    uint64_t suspectBits(size_t i) const { return loadBits(dtype, suspectRaw.data(), i); }
    uint64_t referenceBits(size_t i) const { return loadBits(dtype, referenceRaw.data(), i); }
    bool differs(size_t i) const { return suspectBits(i) != referenceBits(i); }
};

}  // namespace faultline::views
