#include "ChunkScanner.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "BitCounts.h"
#include "MismatchMath.h"
#include "ScanPrimitives.h"
#include "UlpDistance.h"

namespace faultline {

namespace {

using namespace scan;

// Exact: the tolerance is `exact`, so every mismatch is beyond tolerance and the beyond-* figures
// equal the mismatch figures; they are copied once per chunk instead of counted per element.
template <class Tr, bool Exact>
class Scanner {
public:
    using Bits = typename Tr::Bits;
    static constexpr unsigned kBlock = 64;
    // float32, bfloat16 and float16 blocks without NaN/Inf take the vector path (MismatchMath.h).
    static constexpr bool kVector =
        std::is_same_v<Tr, F32> || std::is_same_v<Tr, BF16> || std::is_same_v<Tr, F16>;
    static constexpr MismatchFloat kVectorKind = std::is_same_v<Tr, F32>    ? MismatchFloat::Float32
                                                 : std::is_same_v<Tr, BF16> ? MismatchFloat::BFloat16
                                                                            : MismatchFloat::Float16;

    Scanner(const ScanContext& ctx, std::span<const ElementRun> s, std::span<const ElementRun> r,
            const double* bounds, ChunkAccumulator& acc)
        : m_ctx(ctx),
          m_s(s),
          m_r(r),
          m_bounds(bounds),
          m_acc(acc),
          m_flips(acc.flips.data()),
          m_toOne(acc.toOne.data()),
          m_beyondFlips(acc.beyondFlips.data()),
          m_beyondToOne(acc.beyondToOne.data())
    {
    }

    void run()
    {
        const uint64_t cols = m_ctx.cols;
        uint64_t i = 0;
        uint64_t row = m_acc.first / cols;
        uint64_t col = m_acc.first % cols;
        size_t si = 0, ri = 0;  // the runs holding element i on each side
        while (i < m_acc.count) {
            const uint64_t len = std::min(cols - col, m_acc.count - i);
            // The row's elements, cut where a run of either side ends.
            for (uint64_t done = 0; done < len;) {
                const uint64_t at = i + done;
                while (m_s[si].offset + m_s[si].count <= at) ++si;
                while (m_r[ri].offset + m_r[ri].count <= at) ++ri;
                const ElementRun& s = m_s[si];
                const ElementRun& r = m_r[ri];
                const uint64_t n = std::min({len - done, s.offset + s.count - at, r.offset + r.count - at});
                segment(at, n, row, col + done, static_cast<const Bits*>(s.data) + (at - s.offset),
                        static_cast<const Bits*>(r.data) + (at - r.offset));
                done += n;
            }
            i += len;
            ++row;
            col = 0;
        }
        if constexpr (kVector) flushSegmentBits(m_bitState, m_acc.flips.data(), m_acc.toOne.data());
        m_flips.flush();
        m_toOne.flush();
        m_beyondFlips.flush();
        m_beyondToOne.flush();
        for (const Lane& lane : m_lanes) {
            for (size_t b = 0; b < lane.ulpHist.size(); ++b) m_acc.ulpHist[b] += lane.ulpHist[b];
            addSlots(m_acc.absHist, lane.absSlots);
            addSlots(m_acc.relHist, lane.relSlots);
        }
        m_acc.relHist.infinite -= m_vectorRelInfinite;  // counted apart (relInfinite), not binned
        if constexpr (Exact) {
            // scanChunk's contract: acc is fresh from begin(), so the chunk's figures are all here.
            ChunkAccumulator& acc = m_acc;
            acc.beyond = acc.mismatches;
            acc.firstBeyond = acc.firstMismatch;
            acc.beyondBox = acc.mismatchBox;
            acc.beyondFlips = acc.flips;
            acc.beyondToOne = acc.toOne;
            if (acc.tilesTouched) acc.tileBeyond = acc.tileMismatches;
        }
    }

private:
    // Elements [off, off + len) of the chunk, all in `row`, columns from col0, at sp and rp.
    void segment(uint64_t off, uint64_t len, uint64_t row, uint64_t col0, const Bits* sp, const Bits* rp)
    {
        m_tileRowBase = (row / m_ctx.tileRows - m_acc.stripFirstTileRow) * m_ctx.gridCols;
        m_rowBucketLocal = (row >> m_ctx.rowBucketShift) - m_acc.stripFirstRowBucket;
        m_row = row;
        Hot h = loadHot();
        uint64_t nonFinite = 0;
        uint64_t j = 0;
        if constexpr (kVector) {
            m_blockBitsCounted = m_ctx.vectorMath && len >= kBlock;
            if (m_blockBitsCounted)
                countSegmentBits(kVectorKind, sp, rp, len / kBlock, m_acc.flips.data(), m_acc.toOne.data(),
                                 m_bitState);
        }
        while (j + kBlock <= len) {
            if constexpr (kVector) {
                if (m_ctx.vectorMath) {
                    // Up to four blocks at once; they hold no NaN/Inf when the kernel succeeds,
                    // so they add nothing to nonFinite.
                    const unsigned blocks =
                        unsigned(std::min<uint64_t>(BlockErrors::kMaxBlocks, (len - j) / kBlock));
                    if (computeBlockErrors(kVectorKind, sp + j, rp + j, blocks, m_slots, m_errs)) {
                        if (m_errs.count != 0) {
                            // The first and last mismatch bound the columns: one box update.
                            m_acc.mismatchBox.add(row, col0 + j + m_errs.k[0]);
                            m_acc.mismatchBox.add(row, col0 + j + m_errs.k[m_errs.count - 1]);
                            m_acc.touchTiles(m_ctx);
                            vectorBlock(h, off + j, col0 + j, sp + j, rp + j, blocks * kBlock);
                        }
                        j += blocks * kBlock;
                        continue;
                    }
                    // A NaN/Inf among them: block by block, each still tried on the vector path.
                    for (unsigned b = 0; b < blocks; ++b, j += kBlock)
                        nonFinite += oneBlock(h, off + j, row, col0 + j, sp + j, rp + j);
                    continue;
                }
            }
            nonFinite += oneBlock(h, off + j, row, col0 + j, sp + j, rp + j);
            j += kBlock;
        }
        m_blockBitsCounted = false;
        for (; j < len; ++j) {
            if constexpr (Tr::kFloat) nonFinite += Tr::nonFinite(sp[j]) ? 1u : 0u;
            if (sp[j] != rp[j]) {
                m_acc.mismatchBox.add(row, col0 + j);
                m_acc.touchTiles(m_ctx);
                element(h, off + j, col0 + j, sp[j], rp[j]);
            }
        }
        storeHot(h);
        m_acc.suspectNonFinite += nonFinite;
    }

    // The per-mismatch scalars, kept in registers for a row segment (the accumulator is reached
    // through pointers that may alias, so its fields would round-trip through memory). The sums
    // continue the chunk's running sums in the same element order, so they are bit-identical.
    struct Hot {
        uint64_t mismatches, beyond, relInfinite, maxUlp;
        double sumAbs, sumAbs2, sumRel, sumRel2, maxAbs, maxRel;
    };
    Hot loadHot() const
    {
        const ChunkAccumulator& a = m_acc;
        return Hot{a.mismatches, a.beyond, a.relInfinite, a.maxUlp, a.sumAbs,
                   a.sumAbs2,    a.sumRel, a.sumRel2,     a.maxAbs, a.maxRel};
    }
    void storeHot(const Hot& h)
    {
        ChunkAccumulator& a = m_acc;
        a.mismatches = h.mismatches;
        a.beyond = h.beyond;
        a.relInfinite = h.relInfinite;
        a.maxUlp = h.maxUlp;
        a.sumAbs = h.sumAbs;
        a.sumAbs2 = h.sumAbs2;
        a.sumRel = h.sumRel;
        a.sumRel2 = h.sumRel2;
        a.maxAbs = h.maxAbs;
        a.maxRel = h.maxRel;
    }

    // One 64-element block at sp/rp (chunk-local index local0, column col0 of `row`): on the
    // vector path where it can be, else block(); returns the suspect's NaN/Inf count among its
    // elements.
    [[gnu::always_inline]] inline unsigned oneBlock(Hot& h, uint64_t local0, uint64_t row, uint64_t col0,
                                                    const Bits* sp, const Bits* rp)
    {
        unsigned nf = 0;
        if constexpr (Tr::kFloat)
            for (unsigned k = 0; k < kBlock; ++k) nf += Tr::nonFinite(sp[k]) ? 1u : 0u;
        const uint64_t mask = differingMask(sp, rp);
        if (mask == 0) return nf;
        // The block's first and last mismatch bound its columns; one box update per block.
        m_acc.mismatchBox.add(row, col0 + uint64_t(std::countr_zero(mask)));
        m_acc.mismatchBox.add(row, col0 + 63 - uint64_t(std::countl_zero(mask)));
        m_acc.touchTiles(m_ctx);
        if constexpr (kVector) {
            if (m_ctx.vectorMath && computeBlockErrors(kVectorKind, sp, rp, 1, m_slots, m_errs)) {
                vectorBlock(h, local0, col0, sp, rp, kBlock);
                return nf;
            }
        }
        block(h, local0, col0, sp, rp, mask);
        return nf;
    }

    // Histogram bins that consecutive mismatches hit are spread over kLanes copies (merged at the
    // end of run()) so their increments do not wait on each other.
    static constexpr unsigned kLanes = 4;
    struct Lane {
        std::array<uint64_t, 65> ulpHist{};
        std::array<uint64_t, kDecadeSlots> absSlots{}, relSlots{};
    };

    // The error figures of one finite mismatch: ulp and decade histograms (in `lane`), maxima,
    // and the running sums in element order. Returns the relative error (+inf when the
    // reference is 0, counted apart and kept out of the relative sums).
    [[gnu::always_inline]] inline double recordErrors(Hot& h, Lane& lane, uint64_t ulp, double absErr,
                                                      double rv)
    {
        ++lane.ulpHist[size_t(std::bit_width(ulp))];
        h.maxUlp = std::max(h.maxUlp, ulp);
        h.sumAbs += absErr;
        h.sumAbs2 += absErr * absErr;
        h.maxAbs = std::max(h.maxAbs, absErr);
        ++lane.absSlots[m_slots.of(absErr)];
        const double relErr =
            rv != 0 ? absErr / std::fabs(rv) : (absErr == 0 ? 0.0 : std::numeric_limits<double>::infinity());
        if (std::isinf(relErr)) {
            ++h.relInfinite;
        } else {
            h.sumRel += relErr;
            h.sumRel2 += relErr * relErr;
            h.maxRel = std::max(h.maxRel, relErr);
            ++lane.relSlots[m_slots.of(relErr)];
        }
        return relErr;
    }

    uint64_t tileCol(uint64_t col) const
    {
        return m_ctx.tileColShift >= 0 ? col >> m_ctx.tileColShift : col / m_ctx.tileCols;
    }

    bool withinTolerance(uint64_t ulp, double absErr, double ref, uint64_t local) const
    {
        switch (m_ctx.tolerance.kind) {
            case ToleranceKind::Exact:
                return false;
            case ToleranceKind::Ulp:
                return ulp <= m_ctx.tolerance.ulps;
            case ToleranceKind::Abs:
                return absErr <= m_ctx.tolerance.value;
            case ToleranceKind::Rel:
                return absErr <= m_ctx.tolerance.value * std::fabs(ref);
            case ToleranceKind::Bound:
                return m_bounds != nullptr && absErr <= m_bounds[local];
        }
        return false;
    }

    // The mismatches of one 64-element block (bit k of `mask`: element k differs): gathered,
    // then one pass in element order (so every sum is the same as element by element), then one
    // update per tile touched. Histogram bins that consecutive mismatches hit are spread over
    // kLanes copies so their increments do not wait on each other. A block with a NaN/Inf goes
    // element by element.
    [[gnu::always_inline]] inline void block(Hot& h, uint64_t local0, uint64_t col0, const Bits* sp,
                                             const Bits* rp, uint64_t mask)
    {
        ChunkAccumulator& acc = m_acc;
        Batch& bt = m_batch;
        unsigned m = 0;
        bool nonFinite = false;
        for (uint64_t mm = mask; mm != 0; mm &= mm - 1) {
            const unsigned k = unsigned(std::countr_zero(mm));
            const Bits a = sp[k], b = rp[k];
            bt.a[m] = a;
            bt.b[m] = b;
            bt.k[m] = uint8_t(k);
            if constexpr (Tr::kFloat) nonFinite |= Tr::nonFinite(a) | Tr::nonFinite(b);
            ++m;
        }
        if (nonFinite) [[unlikely]] {
            for (unsigned i = 0; i < m; ++i) element(h, local0 + bt.k[i], col0 + bt.k[i], bt.a[i], bt.b[i]);
            return;
        }
        if (acc.firstMismatch == ChunkAccumulator::kNone) [[unlikely]]
            acc.firstMismatch = acc.first + local0 + bt.k[0];
        h.mismatches += m;
        TopBar bar = topBar();

        for (unsigned i = 0; i < m; ++i) {
            const Bits a = bt.a[i], b = bt.b[i];
            const uint64_t x = uint64_t(Bits(a ^ b));
            if (!m_blockBitsCounted) {
                m_flips.add(x);
                m_toOne.add(x & uint64_t(a));
            }
            const uint64_t ulp = Tr::ulp(a, b);
            const double rv = Tr::toDouble(b);
            const double absErr = std::fabs(Tr::toDouble(a) - rv);
            bt.absErr[i] = absErr;
            const double relErr = recordErrors(h, m_lanes[i % kLanes], ulp, absErr, rv);
            judge(h, bar, local0 + bt.k[i], col0 + bt.k[i], a, b, x, ulp, absErr, relErr);
        }
        addPackedTiles(col0, kBlock, m, bt.k, bt.absErr.data());
    }

    // What a finite mismatch must beat to enter the top-K: it is skipped when its |error| is
    // below `abs`, or equal with at most `ulp` ulps (ranksBefore; within a chunk a later index
    // loses a full tie). Open (abs < 0) while the top-K is not full; closed for good when its
    // worst entry is a NaN/Inf, or when no top-K is kept.
    struct TopBar {
        double abs;
        uint64_t ulp;
    };
    TopBar topBar() const
    {
        const size_t k = m_ctx.topK;
        if (k == 0) return {std::numeric_limits<double>::infinity(), std::numeric_limits<uint64_t>::max()};
        if (m_acc.top.size() < k) return {-1.0, 0};
        const ElementDiff& worst = m_acc.top[m_acc.worstTop];
        if (worst.nonFinite)
            return {std::numeric_limits<double>::infinity(), std::numeric_limits<uint64_t>::max()};
        return {worst.absError, worst.ulp};
    }

    // Blocks the vector path computed (m_errs: their mismatches packed in position order, at
    // least one, no NaN/Inf among them; n elements from column col0): the running sums in
    // element order, the histograms, beyond/anomaly figures, top-K and tiles, as block() does.
    [[gnu::always_inline]] inline void vectorBlock(Hot& h, uint64_t local0, uint64_t col0, const Bits* sp,
                                                   const Bits* rp, unsigned n)
    {
        ChunkAccumulator& acc = m_acc;
        const BlockErrors& e = m_errs;
        if (acc.firstMismatch == ChunkAccumulator::kNone) [[unlikely]]
            acc.firstMismatch = acc.first + local0 + e.k[0];
        const unsigned m = e.count;
        h.mismatches += m;
        h.relInfinite += e.relInfinite;
        m_vectorRelInfinite += e.relInfinite;
        h.maxUlp = std::max(h.maxUlp, e.maxUlp);
        h.maxAbs = std::max(h.maxAbs, e.maxAbs);
        h.maxRel = std::max(h.maxRel, e.maxRel);
        TopBar bar = topBar();
        // Where every mismatch falls in one bin (the bins are monotonic in the value, so the
        // smallest and largest decide), the bin is counted once for them all.
        const size_t ulpBin = size_t(std::bit_width(e.minUlp));
        const bool oneUlpBin = ulpBin == size_t(std::bit_width(e.maxUlp));
        // The kernel binned the errors by decade when they span a few decades.
        const bool absBinned = e.absSlotSpan != 0, relBinned = e.relSlotSpan != 0;
        // Exact tolerance: every mismatch is beyond it, rounding-sized ones are no anomaly, and
        // one below the top-K bar is not offered, so blocks of such mismatches need no judge.
        const bool judged = !Exact || e.maxUlp > kRoundingUlps || !(e.maxAbs < bar.abs);
        // The running sums, and the largest |error| of each 16-column group that has a mismatch,
        // for the tiles (the other groups keep stale values).
        constexpr unsigned kGroup = BlockErrors::kGroup;
        double* const groupMax = m_groupMax.data();
        addSumsAndGroupMaxima(e, h.sumAbs, h.sumAbs2, h.sumRel, h.sumRel2, groupMax);
        // Then what the shortcuts above did not settle, in element order.
        for (unsigned i = 0; i < m && (!oneUlpBin || !absBinned || !relBinned || judged); ++i) {
            Lane& lane = m_lanes[i % kLanes];
            if (!oneUlpBin) ++lane.ulpHist[size_t(e.ulpBin[i])];
            if (!absBinned) ++lane.absSlots[m_slots.of(e.absErr[i])];
            if (!relBinned) ++lane.relSlots[m_slots.of(e.relErr[i])];  // +inf: taken out at the end of run()
            if (judged) {
                const unsigned k = e.k[i];
                const Bits a = sp[k], b = rp[k];
                judge(h, bar, local0 + k, col0 + k, a, b, uint64_t(Bits(a ^ b)), e.ulp[i], e.absErr[i],
                      e.relErr[i]);
            }
        }
        Lane& lane = m_lanes[0];
        if (oneUlpBin) lane.ulpHist[ulpBin] += m;
        for (unsigned j = 0; j < e.absSlotSpan; ++j) lane.absSlots[e.absSlotLo + j] += e.absSlotCount[j];
        for (unsigned j = 0; j < e.relSlotSpan; ++j) lane.relSlots[e.relSlotLo + j] += e.relSlotCount[j];
        if (col0 % kGroup != 0 || m_ctx.tileCols % kGroup != 0) {
            addPackedTiles(col0, n, m, e.k, e.absErr);
            return;
        }
        if (m_ctx.tileCols == kGroup) {
            // One group per tile. Without a branch on whether a group has a mismatch (at a few
            // percent of mismatches that is a coin toss): an empty one adds 0 and maximum 0.
            const size_t tile0 = size_t(m_tileRowBase + tileCol(col0));
            uint64_t* const mismatches = m_acc.tileMismatches.data() + tile0;
            double* const maxAbs = m_acc.tileMaxAbs.data() + tile0;
            for (unsigned g = 0; g < n / kGroup; ++g) {
                const unsigned count = e.groupStart[g + 1] - e.groupStart[g];
                mismatches[g] += count;
                maxAbs[g] = maxOfNonNaN(maxAbs[g], count != 0 ? groupMax[g] : 0.0);
            }
            return;
        }
        // Every tile part is a union of whole groups: its mismatches and maximum are theirs.
        for (uint64_t k = 0; k < n;) {
            const uint64_t tc = tileCol(col0 + k);
            const uint64_t end = std::min<uint64_t>(n, (tc + 1) * m_ctx.tileCols - col0);
            const unsigned count = e.groupStart[end / kGroup] - e.groupStart[k / kGroup];
            if (count != 0) {
                double mx = 0.0;
                for (uint64_t g = k / kGroup; g < end / kGroup; ++g)
                    mx = maxOfNonNaN(mx, e.groupStart[g + 1] != e.groupStart[g] ? groupMax[g] : 0.0);
                addTile(tc, count, mx);
            }
            k = end;
        }
    }

    // The beyond-tolerance figures, anomaly and top-K offer of one finite mismatch whose errors
    // are known; `bar` is the current top-K bar (topBar()), renewed after an insertion.
    [[gnu::always_inline]] inline void judge(Hot& h, TopBar& bar, uint64_t local, uint64_t col, Bits a,
                                             Bits b, uint64_t x, uint64_t ulp, double absErr, double relErr)
    {
        ChunkAccumulator& acc = m_acc;
        const bool beyond = Exact || !withinTolerance(ulp, absErr, Tr::toDouble(b), local);
        if (beyond) {
            if constexpr (!Exact) {
                ++h.beyond;
                if (acc.firstBeyond == ChunkAccumulator::kNone) [[unlikely]]
                    acc.firstBeyond = acc.first + local;
                m_beyondFlips.add(x);
                m_beyondToOne.add(x & uint64_t(a));
                acc.beyondBox.add(m_row, col);
                ++acc.tileBeyond[size_t(m_tileRowBase + tileCol(col))];
            }
            const bool roundingSized = Tr::kFloat && ulp <= kRoundingUlps;
            if (!roundingSized)
                anomaly(acc.first + local, col, x, false, size_t(m_tileRowBase + tileCol(col)), a, b);
        }
        if (absErr < bar.abs || (absErr == bar.abs && ulp <= bar.ulp)) return;  // not among the worst
        offerTop(acc.first + local, col, a, b, false, ulp, absErr, relErr, beyond);
        bar = topBar();
    }

    // One tile's share of a block: n mismatches, the largest |error| among them mx.
    [[gnu::always_inline]] inline void addTile(uint64_t tc, unsigned n, double mx)
    {
        const size_t tile = size_t(m_tileRowBase + tc);
        m_acc.tileMismatches[tile] += n;
        m_acc.tileMaxAbs[tile] = maxOfNonNaN(m_acc.tileMaxAbs[tile], mx);
    }

    // The tiles of the n elements from column col0 whose m mismatches are at positions k[0, m)
    // (ascending) with |error| errs[0, m): the columns split at tile boundaries, one update per
    // part that has a mismatch.
    template <class K>
    void addPackedTiles(uint64_t col0, uint64_t n, unsigned m, const K* k, const double* errs)
    {
        unsigned i = 0;
        for (uint64_t c = 0; c < n && i < m;) {
            const uint64_t tc = tileCol(col0 + c);
            const uint64_t end = std::min<uint64_t>(n, (tc + 1) * m_ctx.tileCols - col0);
            const unsigned from = i;
            double mx = 0.0;
            for (; i < m && uint64_t(k[i]) < end; ++i) mx = maxOfNonNaN(mx, errs[i]);
            if (i != from) addTile(tc, i - from, mx);
            c = end;
        }
    }

    // One mismatching element: chunk-local index `local`, column `col` of m_row. The caller has
    // added it to mismatchBox and touched the tiles. Finite pairs stay inline; NaN/Inf pairs,
    // anomalies and top-K insertions are out of line.
    [[gnu::always_inline]] inline void element(Hot& h, uint64_t local, uint64_t col, Bits a, Bits b)
    {
        ChunkAccumulator& acc = m_acc;
        const uint64_t index = acc.first + local;
        ++h.mismatches;
        if (acc.firstMismatch == ChunkAccumulator::kNone) [[unlikely]]
            acc.firstMismatch = index;
        const uint64_t x = uint64_t(Bits(a ^ b));
        if (!m_blockBitsCounted) {
            m_flips.add(x);
            m_toOne.add(x & uint64_t(a));
        }
        const size_t tile = size_t(m_tileRowBase + tileCol(col));
        ++acc.tileMismatches[tile];

        if (Tr::nonFinite(a) || Tr::nonFinite(b)) [[unlikely]] {
            h.beyond += nonFiniteElement(index, col, x, tile, a, b) ? 1u : 0u;
            return;
        }
        const uint64_t ulp = Tr::ulp(a, b);
        const double rv = Tr::toDouble(b);
        const double absErr = std::fabs(Tr::toDouble(a) - rv);
        const double relErr = recordErrors(h, m_lanes[0], ulp, absErr, rv);
        acc.tileMaxAbs[tile] = std::max(acc.tileMaxAbs[tile], absErr);
        const bool beyond = Exact || !withinTolerance(ulp, absErr, rv, local);
        const bool roundingSized = Tr::kFloat && ulp <= kRoundingUlps;

        if (beyond) {
            if constexpr (!Exact) {
                ++h.beyond;
                if (acc.firstBeyond == ChunkAccumulator::kNone) [[unlikely]]
                    acc.firstBeyond = index;
                m_beyondFlips.add(x);
                m_beyondToOne.add(x & uint64_t(a));
                acc.beyondBox.add(m_row, col);
                ++acc.tileBeyond[tile];
            }
            if (!roundingSized) anomaly(index, col, x, false, tile, a, b);
        }

        // Top-K: cheap rejection before building the entry.
        const size_t k = m_ctx.topK;
        if (k == 0) return;
        if (acc.top.size() >= k) {
            const ElementDiff& worst = acc.top[acc.worstTop];
            // Within a chunk indices only grow, so a full tie loses to the entry already held.
            const bool loses = worst.nonFinite | (absErr < worst.absError) |
                               ((absErr == worst.absError) & (ulp <= worst.ulp));
            if (loses) return;
        }
        offerTop(index, col, a, b, false, ulp, absErr, relErr, beyond);
    }

    // A mismatch where either side is NaN/Inf; returns whether it is beyond tolerance.
    [[gnu::noinline]] bool nonFiniteElement(uint64_t index, uint64_t col, uint64_t x, size_t tile, Bits a,
                                            Bits b)
    {
        ChunkAccumulator& acc = m_acc;
        bool beyond = true;
        ++acc.nonFiniteMismatches;
        if (Tr::nonFinite(a)) ++acc.mismatchSuspectNonFinite;
        const bool an = Tr::isNan(a), bn = Tr::isNan(b), ai = Tr::isInf(a), bi = Tr::isInf(b);
        if (an && bn) {
            ++acc.nanPayloadChanged;
            beyond = m_ctx.tolerance.kind == ToleranceKind::Exact;
        } else {
            if (an) ++acc.nanIntroduced;
            if (bn) ++acc.nanRemoved;
            if (ai && !bi) ++acc.infIntroduced;
            if (bi && !ai) ++acc.infRemoved;
            if (ai && bi) ++acc.infSignChanged;
        }
        acc.tileMaxAbs[tile] = std::numeric_limits<double>::infinity();
        if (beyond) {
            if constexpr (!Exact) {
                if (acc.firstBeyond == ChunkAccumulator::kNone) acc.firstBeyond = index;
                m_beyondFlips.add(x);
                m_beyondToOne.add(x & uint64_t(a));
                acc.beyondBox.add(m_row, col);
                ++acc.tileBeyond[tile];
            }
            anomaly(index, col, x, true, tile, a, b);
        }
        const size_t k = m_ctx.topK;
        if (k == 0) return beyond;
        if (acc.top.size() >= k && acc.top[acc.worstTop].nonFinite)
            return beyond;  // later index never beats an earlier one
        const double nan = std::numeric_limits<double>::quiet_NaN();
        offerTop(index, col, a, b, true, 0, nan, nan, beyond);
        return beyond;
    }

    [[gnu::noinline]] void offerTop(uint64_t index, uint64_t col, Bits a, Bits b, bool nonFinite,
                                    uint64_t ulp, double absErr, double relErr, bool beyond)
    {
        ElementDiff e;
        e.index = index;
        e.row = m_row;
        e.col = col;
        e.suspect = Tr::toDouble(a);
        e.reference = Tr::toDouble(b);
        e.suspectBits = uint64_t(a);
        e.referenceBits = uint64_t(b);
        e.nonFinite = nonFinite;
        e.ulp = ulp;
        e.absError = absErr;
        e.relError = relErr;
        e.beyond = beyond;
        m_acc.offerTop(e, m_ctx.topK);
    }

    [[gnu::noinline]] void anomaly(uint64_t index, uint64_t col, uint64_t x, bool nonFinite, size_t tile,
                                   Bits a, Bits b)
    {
        ChunkAccumulator& acc = m_acc;
        ++acc.anomalies;
        if (acc.firstAnomaly == ChunkAccumulator::kNone) acc.firstAnomaly = index;
        acc.lastAnomaly = index;
        addBits(x, a, acc.anomalyFlips.data(), acc.anomalyToOne.data());
        ++acc.anomalyPopcount[size_t(std::popcount(x))];
        // Single-bit-like: the highest differing bit alone, or (floats) that bit plus a
        // rounding-sized remainder, i.e. one flip on top of rounding noise.
        const unsigned top = unsigned(std::bit_width(x)) - 1;
        bool single = std::has_single_bit(x);
        if constexpr (Tr::kFloat) {
            if (!single && !nonFinite) {
                const Bits unflipped = Bits(a ^ (Bits(1) << top));
                single = !Tr::nonFinite(unflipped) && Tr::ulp(unflipped, b) <= kRoundingUlps;
            }
            if (single && top == Tr::kWidth - 1) ++acc.anomalySignOnly;
            if ((x & uint64_t(Tr::kExp)) != 0) {
                ++acc.anomalyExponent;
                const Bits restored = Bits(a ^ (Bits(x) & Tr::kExp));
                if (restored == b ||
                    (!Tr::nonFinite(restored) && !Tr::nonFinite(b) && Tr::ulp(restored, b) <= kRoundingUlps))
                    ++acc.anomalyExponentOnly;
            }
        }
        if (single) ++acc.anomalySingleBit[top];
        if (nonFinite) ++acc.anomalyNonFinite;
        ++acc.tileAnomalies[tile];
        acc.touchLines(m_ctx);
        ++acc.rowCounts[size_t(m_rowBucketLocal)];
        ++acc.colCounts[size_t(col >> m_ctx.colBucketShift)];
        if (acc.firstIndices.size() < m_ctx.sampleSize) acc.firstIndices.push_back(index);
        acc.addSpread(index, m_ctx.sampleSize);
    }

    const ScanContext& m_ctx;
    std::span<const ElementRun> m_s, m_r;
    const double* m_bounds;
    ChunkAccumulator& m_acc;
    BitCounter<sizeof(Bits)> m_flips, m_toOne, m_beyondFlips, m_beyondToOne;
    // One block's gathered mismatches and their errors.
    struct Batch {
        Bits a[kBlock], b[kBlock];
        uint8_t k[kBlock];
        std::array<double, kBlock> absErr;  // |error| of the mismatches, in position order
    };
    Batch m_batch;
    BlockErrors m_errs;  // the vector path's figures of the current blocks
    std::array<double, BlockErrors::kMaxElements / BlockErrors::kGroup> m_groupMax{};  // see vectorBlock
    bool m_blockBitsCounted = false;   // flips/toOne of the segment's full blocks counted already
    SegmentBitState m_bitState;        // their counts not yet added to flips/toOne
    uint64_t m_vectorRelInfinite = 0;  // infinite relative errors the vector path put in relSlots
    std::array<Lane, kLanes> m_lanes{};
    const DecadeSlots& m_slots = DecadeSlots::table();
    uint64_t m_tileRowBase = 0;
    uint64_t m_rowBucketLocal = 0;
    uint64_t m_row = 0;
};

template <class Tr>
void scanTyped(const ScanContext& ctx, std::span<const ElementRun> s, std::span<const ElementRun> r,
               const double* bounds, ChunkAccumulator& acc)
{
    if (ctx.tolerance.kind == ToleranceKind::Exact)
        Scanner<Tr, true>(ctx, s, r, bounds, acc).run();
    else
        Scanner<Tr, false>(ctx, s, r, bounds, acc).run();
}

}  // namespace

void scanChunk(const ScanContext& ctx, std::span<const ElementRun> suspect,
               std::span<const ElementRun> reference, const double* bounds, ChunkAccumulator& acc)
{
    if (acc.count == 0 || ctx.cols == 0) return;
    switch (ctx.dtype) {
        case DType::Float64:
            return scanTyped<F64>(ctx, suspect, reference, bounds, acc);
        case DType::Float32:
            return scanTyped<F32>(ctx, suspect, reference, bounds, acc);
        case DType::Float16:
            return scanTyped<F16>(ctx, suspect, reference, bounds, acc);
        case DType::BFloat16:
            return scanTyped<BF16>(ctx, suspect, reference, bounds, acc);
        case DType::Float8E4M3FN:
            return scanTyped<E4M3>(ctx, suspect, reference, bounds, acc);
        case DType::Float8E5M2:
            return scanTyped<E5M2>(ctx, suspect, reference, bounds, acc);
        case DType::Int8:
            return scanTyped<IntTraits<uint8_t, true>>(ctx, suspect, reference, bounds, acc);
        case DType::Int16:
            return scanTyped<IntTraits<uint16_t, true>>(ctx, suspect, reference, bounds, acc);
        case DType::Int32:
            return scanTyped<IntTraits<uint32_t, true>>(ctx, suspect, reference, bounds, acc);
        case DType::Int64:
            return scanTyped<IntTraits<uint64_t, true>>(ctx, suspect, reference, bounds, acc);
        case DType::UInt8:
        case DType::Bool:
            return scanTyped<IntTraits<uint8_t, false>>(ctx, suspect, reference, bounds, acc);
        case DType::UInt16:
            return scanTyped<IntTraits<uint16_t, false>>(ctx, suspect, reference, bounds, acc);
        case DType::UInt32:
            return scanTyped<IntTraits<uint32_t, false>>(ctx, suspect, reference, bounds, acc);
        case DType::UInt64:
            return scanTyped<IntTraits<uint64_t, false>>(ctx, suspect, reference, bounds, acc);
    }
}

}  // namespace faultline
