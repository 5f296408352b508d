#include "LaunchGeometry.h"

#include <algorithm>

namespace faultline::cuda {

View2d view2d(const std::vector<uint64_t>& shape)
{
    if (shape.empty()) return {1, 1};
    View2d v;
    v.cols = shape.back();
    uint64_t rows = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
    v.rows = v.cols == 0 ? 0 : rows;
    return v;
}

TileGrid tileGrid(View2d v, uint32_t tile)
{
    TileGrid g;
    g.tile = tile;
    if (tile == 0) return g;
    g.tileRows = (v.rows + tile - 1) / tile;
    g.tileCols = (v.cols + tile - 1) / tile;
    return g;
}

uint32_t gemmSmTile(int64_t batch, int64_t m)
{
    if (batch <= 1 || m % kGemmBlock == 0) return kGemmBlock;
    uint32_t t = kGemmBlock;
    while (t > 1 && m % int64_t(t) != 0) t /= 2;
    return t;
}

TileGrid gemmTileMap(View2d v, int64_t batch, int64_t m)
{
    const TileGrid g = tileGrid(v, gemmSmTile(batch, m));
    return g.count() <= kMaxTileSmEntries ? g : TileGrid{};
}

GemmGrid gemmGrid(int64_t batch, int64_t m, int64_t n)
{
    GemmGrid g;
    g.x = uint32_t((n + kGemmBlock - 1) / kGemmBlock);
    g.y = uint32_t((m + kGemmBlock - 1) / kGemmBlock);
    g.z = uint32_t(std::max<int64_t>(batch, 0));
    return g;
}

std::vector<GemmLaunch> gemmLaunches(int64_t batch, int64_t m, int64_t n)
{
    const GemmGrid grid = gemmGrid(batch, m, n);
    std::vector<GemmLaunch> launches;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) return launches;
    for (uint32_t z0 = 0; z0 < grid.z; z0 += kMaxGridYZ)
        for (uint32_t y0 = 0; y0 < grid.y; y0 += kMaxGridYZ) {
            GemmLaunch l;
            l.blocks = {grid.x, std::min(kMaxGridYZ, grid.y - y0), std::min(kMaxGridYZ, grid.z - z0)};
            l.batchBase = z0;
            l.rowBlockBase = y0;
            launches.push_back(l);
        }
    return launches;
}

namespace {
thread_local uint32_t t_gridCap = 0;
}

uint32_t gridCap()
{
    return t_gridCap;
}

ScopedGridCap::ScopedGridCap(uint32_t cap) : m_previous(t_gridCap)
{
    t_gridCap = cap;
}

ScopedGridCap::~ScopedGridCap()
{
    t_gridCap = m_previous;
}

uint32_t gridFor(uint64_t work)
{
    const uint64_t most = t_gridCap ? std::min<uint64_t>(t_gridCap, kMaxGridBlocks) : kMaxGridBlocks;
    return uint32_t(std::clamp<uint64_t>(work, 1, most));
}

uint32_t attentionBlocks(uint64_t rows, uint64_t sk)
{
    const uint64_t bands = (rows + kSmallTile - 1) / kSmallTile;
    const uint64_t perBlock = uint64_t(kSmallTile) * std::max<uint64_t>(sk, 1);
    const uint64_t cap = std::max<uint64_t>(kAttentionScratchFloats / perBlock, 1);
    return uint32_t(std::min<uint64_t>(gridFor(bands), cap));
}

uint64_t attentionScratchFloats(uint64_t rows, uint64_t sk)
{
    return uint64_t(attentionBlocks(rows, sk)) * kSmallTile * sk;
}

uint64_t tileIndexOf(const TileGrid& g, uint64_t row, uint64_t col)
{
    return (row / g.tile) * g.tileCols + col / g.tile;
}

uint64_t countBadTileSm(const std::vector<int32_t>& sm, const TileGrid& g, int smIdBound)
{
    if (sm.size() != g.count()) return std::max<uint64_t>(g.count(), sm.size());
    return uint64_t(
        std::count_if(sm.begin(), sm.end(), [smIdBound](int32_t s) { return s < 0 || s >= smIdBound; }));
}

}  // namespace faultline::cuda
