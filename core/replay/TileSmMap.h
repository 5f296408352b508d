#pragma once
// Which SM computed each tile of an op's output: square tiles of `tile` × `tile` elements over
// the 2-D view of output 0 (last dim = columns), in row-major tile order. Targets that know it
// record it with every output (sim targets their virtual layout, CUDA targets the SM each block
// ran on); campaigns keep it with the runs, and the heatmap colours divergent tiles by it.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "../Result.h"

namespace faultline {

struct TileSmMap {
    uint32_t tile = 0;
    uint64_t rows = 0, cols = 0;  // the 2-D view the tiles cover
    std::vector<int32_t> sm;      // one per tile, row-major

    uint64_t tilesDown() const { return tile ? (rows + tile - 1) / tile : 0; }
    uint64_t tilesAcross() const { return tile ? (cols + tile - 1) / tile : 0; }
    // Non-empty, with one SM id per tile.
    bool valid() const { return tile > 0 && !sm.empty() && sm.size() == tilesDown() * tilesAcross(); }
    // The SM of element (row, col); -1 outside the view or for an invalid map.
    int32_t smOf(uint64_t row, uint64_t col) const;
    // One more than the largest SM id (the colour range needed), 0 when empty.
    uint32_t smCount() const;

    // {"tile":T, "rows":R, "cols":C, "sm":[...]}
    nlohmann::json toJson() const;
    static Result<TileSmMap> fromJson(const nlohmann::json& j);
};

}  // namespace faultline
