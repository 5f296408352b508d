#pragma once
// Where to look first: the connected groups of finest pyramid tiles (8-neighbour) that hold
// anomalies (beyond tolerance and not rounding-sized; when there are none, beyond-tolerance
// elements; when none either, mismatches), each as its bounding box in elements, worst first:
// larger max |error| first (NaN/Inf first of all), then more elements, then position. The
// heatmap outlines them at any zoom and steps through them ("zoom to worst", next / previous).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "Divergence.h"

namespace faultline {

struct AnomalyRegion {
    Region box;              // half-open, in elements, clipped to the 2-D view
    uint64_t count = 0;      // elements counted (what `counted` names) in its tiles
    double maxAbsError = 0;  // the tiles' max |error|; +inf where a NaN/Inf mismatch lies
    uint64_t tiles = 0;      // finest tiles in the group
};

struct AnomalyRegions {
    std::string counted;                 // "anomalies" | "beyond tolerance" | "mismatches" | ""
    std::vector<AnomalyRegion> regions;  // worst first, at most the limit asked for
    uint64_t found = 0;                  // groups found (may exceed regions.size())
};

AnomalyRegions findAnomalyRegions(const Divergence& d, size_t maxRegions = 256);

}  // namespace faultline
