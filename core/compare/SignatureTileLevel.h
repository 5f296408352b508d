#pragma once
// The tile size a divergence's signature names, as a level of its tile pyramid: one tile
// vocabulary for the signature and the views that name tiles (the heatmap's hover).
#include <cstddef>

namespace faultline {

struct Divergence;

// The level whose tiles the signature names: the tile_clustered finding's (primary or
// secondary) inferred tile size, else the finest level (the tiles `widespread` counts).
size_t signatureTileLevel(const Divergence& d);

}  // namespace faultline
