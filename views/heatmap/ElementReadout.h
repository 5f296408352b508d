#pragma once
// The readout of one element whose values are held (ElementValues): the suspect's and the
// reference's value with their bits, |error|, relative error, the ulp distance (the core's
// ulpDistance, the comparison's own arithmetic) and the differing bits by field.
#include <QStringList>
#include <cstdint>

#include "views/heatmap/ElementValues.h"

namespace faultline::views {

// One line per fact; empty when (row, col) is not held.
QStringList elementReadout(const ElementValues& values, uint64_t row, uint64_t col);

}  // namespace faultline::views
