#pragma once
// Launch geometry of the CUDA golden kernels and the tile -> SM map they record, in plain C++ so
// it is testable without a GPU. The map follows ReplayOutput::tileSm (core/replay/Target.h):
// row-major tiles of smTile x smTile over the 2-D view of output 0 (rows = all leading dims,
// cols = the last dim).
#include <cstdint>
#include <vector>

namespace faultline::cuda {

// GEMM: one thread block computes a kGemmBlock x kGemmBlock block of one batch's output with
// kGemmThreads threads, each owning kGemmThreadTile x kGemmThreadTile outputs.
inline constexpr int kGemmBlock = 128;
inline constexpr int kGemmBlockK = 8;
inline constexpr int kGemmThreadTile = 8;
inline constexpr int kGemmThreads = (kGemmBlock / kGemmThreadTile) * (kGemmBlock / kGemmThreadTile);
// Element-wise and row kernels: one block per tile of kSmallTile x kSmallTile (element-wise) or
// per kSmallTile rows (row ops, one warp per row).
inline constexpr int kSmallTile = 16;
inline constexpr int kMaxGridBlocks = 65535;  // grid-stride loops above this

struct View2d {
    uint64_t rows = 0, cols = 0;
};

// rows x cols of a tensor shape's 2-D view (a scalar is 1 x 1; an empty last dim gives 0 cols).
View2d view2d(const std::vector<uint64_t>& shape);

struct TileGrid {
    uint32_t tile = 0;  // edge of a square tile, in elements
    uint64_t tileRows = 0, tileCols = 0;
    uint64_t count() const { return tileRows * tileCols; }
};

TileGrid tileGrid(View2d v, uint32_t tile);

// The SM-map tile edge of a batched GEMM whose output is batch x m x n: kGemmBlock when one
// block's rows never straddle two batches in the 2-D view (batch == 1 or m a multiple of it),
// else the largest power of two <= kGemmBlock dividing m, so that every map tile lies inside
// one thread block.
uint32_t gemmSmTile(int64_t batch, int64_t m);

// The tile -> SM map a golden GEMM records over the 2-D view `v` of its output: tiles of
// gemmSmTile, or none (an empty grid) when that map would exceed kMaxTileSmEntries entries, which
// happens when batch > 1 and m has no large power-of-two divisor (the tile then shrinks towards
// single elements and the map towards the output's own size).
inline constexpr uint64_t kMaxTileSmEntries = uint64_t(1) << 22;  // 16 MiB of int32
TileGrid gemmTileMap(View2d v, int64_t batch, int64_t m);

struct GemmGrid {
    uint32_t x = 0, y = 0, z = 0;  // n blocks, m blocks, batch
};
GemmGrid gemmGrid(int64_t batch, int64_t m, int64_t n);

// The launches that cover gemmGrid: gridDim.y and gridDim.z stop at 65535, so larger batches and
// taller outputs take several, each with the batch and row-block index it starts at.
inline constexpr uint32_t kMaxGridYZ = 65535;
struct GemmLaunch {
    GemmGrid blocks;
    int64_t batchBase = 0, rowBlockBase = 0;
};
std::vector<GemmLaunch> gemmLaunches(int64_t batch, int64_t m, int64_t n);

// The most thread blocks the golden kernels launch on the calling thread: an op's grid=N setting
// (core/golden/ReplaySettings.h), set for one op's launches by ScopedGridCap; 0 for no cap. With a
// cap, every kernel strides over its tiles (the gemm too), so tile t is computed by block t mod N.
uint32_t gridCap();
class ScopedGridCap {
public:
    explicit ScopedGridCap(uint32_t cap);
    ~ScopedGridCap();
    ScopedGridCap(const ScopedGridCap&) = delete;
    ScopedGridCap& operator=(const ScopedGridCap&) = delete;

private:
    uint32_t m_previous;
};

// Blocks to launch for `work` independent units with a grid-stride loop (at most gridCap()).
uint32_t gridFor(uint64_t work);

// Attention: one block of kSmallTile warps per band of kSmallTile query rows (grid-stride), each
// warp with its own probability row of sk floats in a scratch buffer. The grid is capped so the
// scratch stays near kAttentionScratchFloats floats (at least one block).
inline constexpr uint64_t kAttentionScratchFloats = uint64_t(1) << 26;  // 256 MiB
uint32_t attentionBlocks(uint64_t rows, uint64_t sk);
// Floats of scratch launchGoldenAttention needs: attentionBlocks x kSmallTile warps x sk.
uint64_t attentionScratchFloats(uint64_t rows, uint64_t sk);

// For a tile map `sm` over grid `g`: the tile holding element (row, col) of the 2-D view.
uint64_t tileIndexOf(const TileGrid& g, uint64_t row, uint64_t col);

// Checks a recorded map: right size and every entry in [0, smIdBound) (the device's %nsmid,
// queryTileSmBound: SM ids need not be contiguous). Returns the number of bad entries (a size
// mismatch counts as all).
uint64_t countBadTileSm(const std::vector<int32_t>& sm, const TileGrid& g, int smIdBound);

}  // namespace faultline::cuda
