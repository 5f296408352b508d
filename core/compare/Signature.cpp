#include "Signature.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "Divergence.h"

namespace faultline {

namespace {

// ---- thresholds (documented in Signature.h) ----
constexpr double kStuckPurity = 0.99;
constexpr double kStuckCoverage = 0.9;
constexpr double kNanInfShare = 0.5;
constexpr double kSignShare = 0.9;
constexpr double kSingleBitShare = 0.9;
constexpr double kStuckSingle = 0.9;        // of the stuck bit's flips: that bit alone changed
constexpr double kStuckUnitShare = 0.1;     // of the elements, for a stuck bit without structure
constexpr double kExponentShare = 0.5;      // secondary: anomalies touching the exponent
constexpr double kExponentOnlyShare = 0.9;  // what = exponent
constexpr double kFixedBitShare = 0.9;      // of the single-bit anomalies at one position
constexpr double kRangeDensity = 0.5;
constexpr double kConcentrated = 0.5;      // occupied <= this x the random expectation
constexpr double kSpanning = 0.8;          // stripes: lines crossed >= this x the expectation
constexpr double kPeriodicGapShare = 0.5;  // of the gaps between run starts
constexpr double kPeriodicShare = 0.9;     // of the anomalies inside the periodic window
constexpr double kStrideShare = 0.8;
constexpr double kTileDensityKeep = 0.7;
constexpr double kDenseTile = 0.25;
constexpr double kDenseShare = 0.8;
constexpr double kWidespreadTiles = 0.5;
constexpr size_t kListed = 64;  // evidence lists are cut here

std::string fmt(const char* format, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string num(uint64_t v)
{
    return std::to_string(v);
}
std::string pct(double fraction)
{
    return fmt("%.3g%%", 100.0 * fraction);
}

// Expected number of occupied bins when n points fall uniformly on `total` elements, bin b
// holding size(b) elements.
template <class SizeOf>
double expectedOccupied(uint64_t bins, SizeOf size, uint64_t total, uint64_t n)
{
    double e = 0.0;
    for (uint64_t b = 0; b < bins; ++b) {
        const double p = double(size(b)) / double(total);
        e += p >= 1.0 ? 1.0 : -std::expm1(double(n) * std::log1p(-p));
    }
    return e;
}

struct Candidate {
    SignatureFinding finding;
    bool primaryEligible = true;
};

SignatureFinding finding(SignatureKind k, double confidence, std::string detail)
{
    SignatureFinding f;
    f.kind = k;
    f.confidence = std::clamp(confidence, 0.0, 1.0);
    f.detail = std::move(detail);
    return f;
}

// ---- bit-level ----

// `single`: single-bit-like counts per position of the same elements (null: not known).
std::optional<Candidate> detectStuckBit(const Divergence& d, const BitFlips& bits, uint64_t n,
                                        const char* what, const std::vector<uint64_t>* single)
{
    if (n < kMinEvidence) return std::nullopt;
    std::optional<unsigned> best;
    double bestCoverage = 0.0;
    for (unsigned b = 0; b < bits.flips.size(); ++b) {
        const uint64_t f = bits.flips[b];
        if (f < kMinEvidence) continue;
        const uint64_t up = bits.toOne[b];
        const double purity = double(std::max(up, f - up)) / double(f);
        const double coverage = double(f) / double(n);
        // Only that bit changed in (nearly) all of them: an unrelated value written over the
        // element (a NaN, garbage) also sets some bit one way, but changes others with it.
        const bool alone = !single || double((*single)[b]) >= kStuckSingle * double(f);
        if (purity >= kStuckPurity && coverage >= kStuckCoverage && alone && coverage > bestCoverage) {
            best = b;
            bestCoverage = coverage;
        }
    }
    if (!best) return std::nullopt;
    const unsigned b = *best;
    const uint64_t f = bits.flips[b], up = bits.toOne[b];
    const unsigned value = up * 2 >= f ? 1u : 0u;
    const uint64_t agree = value ? up : f - up;
    const double purity = double(agree) / double(f);
    const double chance = std::ldexp(1.0, -int(std::min<uint64_t>(f, 60)) + 1);
    const std::string field(bitFieldName(d.dtype, b));
    SignatureFinding out =
        finding(SignatureKind::StuckBit, std::min(1.0, bestCoverage) * purity * (1.0 - chance),
                "bit " + num(b) + " (" + field + ") stuck at " + num(value) + ": " + num(f) + " of " +
                    num(n) + " " + what + " flip it, " + num(agree) + " of them " +
                    (value ? "0->1" : "1->0") + " (elements already at " + num(value) + " are untouched)");
    out.evidence.bit = b;
    out.evidence.bitValue = value;
    out.evidence.field = field;
    return Candidate{out, true};
}

std::optional<Candidate> detectNanInf(const Divergence& d)
{
    if (d.anomalyNonFinite == 0) return std::nullopt;
    const double share = double(d.anomalyNonFinite) / double(d.anomalies);
    std::string detail = "NaN introduced " + num(d.nanIntroduced) + ", removed " + num(d.nanRemoved) +
                         "; Inf introduced " + num(d.infIntroduced) + ", removed " + num(d.infRemoved);
    if (d.infSignChanged) detail += ", sign changed " + num(d.infSignChanged);
    if (d.nanPayloadChanged) detail += "; NaN payload changed " + num(d.nanPayloadChanged);
    detail += " (" + pct(share) + " of the anomalies)";
    return Candidate{finding(SignatureKind::NanInf, share, detail), share >= kNanInfShare};
}

std::optional<Candidate> detectSignFlip(const Divergence& d)
{
    if (!isFloatingPoint(d.dtype) || d.anomalySignOnly == 0) return std::nullopt;
    const double share = double(d.anomalySignOnly) / double(d.anomalies);
    if (share < kSignShare) return std::nullopt;
    return Candidate{
        finding(SignatureKind::SignFlip, share,
                num(d.anomalySignOnly) + " of " + num(d.anomalies) +
                    " anomalies differ in the sign bit (same magnitude up to rounding, opposite sign)"),
        true};
}

// Single-bit-like anomalies; `fixed` tells whether >= kFixedBitShare of them are at one position.
std::optional<Candidate> detectSingleBit(const Divergence& d, bool& fixed)
{
    const std::vector<uint64_t>& at = d.anomalySingleBit;
    uint64_t single = 0;
    unsigned positions = 0, top = 0;
    for (unsigned b = 0; b < at.size(); ++b) {
        single += at[b];
        if (at[b] != 0) ++positions;
        if (at[b] > at[top]) top = b;
    }
    if (single == 0) return std::nullopt;
    const double share = double(single) / double(d.anomalies);
    if (share < kSingleBitShare) return std::nullopt;
    fixed = double(at[top]) >= kFixedBitShare * double(single);
    const std::string field(bitFieldName(d.dtype, top));
    std::string where;
    if (fixed) {
        const uint64_t up = top < d.anomalyBits.toOne.size() ? d.anomalyBits.toOne[top] : 0;
        const uint64_t flips = top < d.anomalyBits.flips.size() ? d.anomalyBits.flips[top] : 0;
        where = "all at bit " + num(top) + " (" + field + ", " + num(at[top]) + "x), both directions (" +
                num(up) + " 0->1, " + num(flips - up) + " 1->0)";
    } else {
        where = "at " + num(positions) + " bit positions, most often bit " + num(top) + " (" + field + ", " +
                num(at[top]) + "x)";
    }
    return Candidate{
        finding(SignatureKind::SingleBitRandom, share,
                num(single) + " of " + num(d.anomalies) + " anomalies differ in one flipped bit (" +
                    num(d.anomalyPopcount[1]) + " in exactly one), " + where),
        true};
}

// Exponent bits: primary-eligible when the anomalies differ in the exponent field only, else a
// secondary finding when at least kExponentShare of them touch it.
std::optional<Candidate> detectExponent(const Divergence& d)
{
    if (!isFloatingPoint(d.dtype) || d.anomalyExponent == 0) return std::nullopt;
    const double only = double(d.anomalyExponentOnly) / double(d.anomalies);
    if (only >= kExponentOnlyShare)
        return Candidate{finding(SignatureKind::Exponent, only,
                                 num(d.anomalyExponentOnly) + " of " + num(d.anomalies) +
                                     " anomalies differ in exponent bits only (mantissa and sign intact up "
                                     "to rounding; errors of 2x and more; " +
                                     maxErrorText(d) + ")"),
                         true};
    const double share = double(d.anomalyExponent) / double(d.anomalies);
    if (share < kExponentShare) return std::nullopt;
    return Candidate{
        finding(SignatureKind::Exponent, share,
                num(d.anomalyExponent) + " of " + num(d.anomalies) +
                    " anomalies have exponent bits flipped among other bits (" + num(d.anomalyExponentOnly) +
                    " in the exponent only; " + maxErrorText(d) + ")"),
        false};
}

// ---- spatial ----

struct Lines {
    uint64_t occupied = 0;
    double expected = 0.0;
    std::vector<uint64_t> firstOfOccupied;  // first line of each occupied bucket
};

Lines lineStats(const std::vector<uint64_t>& counts, uint64_t bucket, uint64_t extent, uint64_t across,
                uint64_t total, uint64_t n)
{
    Lines l;
    for (size_t i = 0; i < counts.size(); ++i) {
        if (counts[i] == 0) continue;
        ++l.occupied;
        l.firstOfOccupied.push_back(uint64_t(i) * bucket);
    }
    l.expected = expectedOccupied(
        counts.size(), [&](uint64_t b) { return std::min(bucket, extent - b * bucket) * across; }, total, n);
    return l;
}

std::string listLines(const std::vector<uint64_t>& lines, uint64_t bucket)
{
    std::string s;
    const size_t shown = std::min<size_t>(lines.size(), 8);
    for (size_t i = 0; i < shown; ++i) {
        if (i) s += ", ";
        s += num(lines[i]);
        if (bucket > 1) s += "-" + num(lines[i] + bucket - 1);
    }
    if (lines.size() > shown) s += ", ...";
    return s;
}

// Most common value of `v` and its share.
std::pair<uint64_t, double> mode(const std::vector<uint64_t>& v)
{
    if (v.empty()) return {0, 0.0};
    std::map<uint64_t, uint64_t> counts;
    for (uint64_t x : v) ++counts[x];
    auto best = counts.begin();
    for (auto it = counts.begin(); it != counts.end(); ++it)
        if (it->second > best->second) best = it;
    return {best->first, double(best->second) / double(v.size())};
}

std::optional<SignatureFinding> detectContiguousRange(const Divergence& d)
{
    const uint64_t first = *d.spatial.firstAnomaly, last = *d.spatial.lastAnomaly;
    const uint64_t span = last - first + 1;
    const double density = double(d.anomalies) / double(span);
    if (density < kRangeDensity || double(span) > 0.9 * double(d.elements)) return std::nullopt;
    const bool wholeRows = d.rows > 1 && d.cols > 1 && first % d.cols == 0 && (last + 1) % d.cols == 0;
    if (wholeRows) return std::nullopt;  // a row stripe
    SignatureFinding f = finding(SignatureKind::AddressRange, density,
                                 "anomalies confined to flat elements [" + num(first) + ", " + num(last + 1) +
                                     ") (" + num(span) + " elements, rows " + num(first / d.cols) + "-" +
                                     num(last / d.cols) + "), " + pct(density) + " of them anomalous");
    f.evidence.range = std::make_pair(first, last + 1);
    return f;
}

std::optional<SignatureFinding> detectStripe(const Divergence& d, bool rowsNotCols)
{
    const SpatialProfile& sp = d.spatial;
    const Lines rows = lineStats(sp.rowCounts, sp.rowBucket, d.rows, d.cols, d.elements, d.anomalies);
    const Lines cols = lineStats(sp.colCounts, sp.colBucket, d.cols, d.rows, d.elements, d.anomalies);
    const Lines& along = rowsNotCols ? rows : cols;   // the few lines
    const Lines& across = rowsNotCols ? cols : rows;  // what they span
    const uint64_t buckets = rowsNotCols ? sp.rowCounts.size() : sp.colCounts.size();
    if (buckets < 2) return std::nullopt;
    if (double(along.occupied) > kConcentrated * along.expected) return std::nullopt;
    // Spanning: a stripe crosses (nearly) all the lines a random placement would; one SM's tile
    // in a narrow tensor covers a third of the columns but only part of the rows.
    if (double(across.occupied) < kSpanning * across.expected) return std::nullopt;
    // ... and stretches over at least half of it (a few anomalies in a clipped edge tile cross
    // about as many lines as random ones would, but only the tile's).
    {
        const uint64_t acrossBucketSize = rowsNotCols ? sp.colBucket : sp.rowBucket;
        const uint64_t extent = rowsNotCols ? d.cols : d.rows;
        const auto& lines = across.firstOfOccupied;
        if (lines.empty() || 2 * (lines.back() - lines.front() + acrossBucketSize) < extent)
            return std::nullopt;
    }
    const uint64_t bucket = rowsNotCols ? sp.rowBucket : sp.colBucket;
    const uint64_t spanExtent = rowsNotCols ? d.cols : d.rows;
    const uint64_t acrossBucket = rowsNotCols ? sp.colBucket : sp.rowBucket;
    SignatureFinding f = finding(rowsNotCols ? SignatureKind::RowStripe : SignatureKind::ColumnStripe,
                                 1.0 - double(along.occupied) / along.expected, "");
    f.evidence.lineCount = along.occupied * bucket;
    f.evidence.lines.assign(
        along.firstOfOccupied.begin(),
        along.firstOfOccupied.begin() + std::ptrdiff_t(std::min(kListed, along.firstOfOccupied.size())));
    std::string stride;
    if (!rowsNotCols && bucket == 1 && along.firstOfOccupied.size() >= 3) {
        std::vector<uint64_t> gaps;
        for (size_t i = 1; i < along.firstOfOccupied.size(); ++i)
            gaps.push_back(along.firstOfOccupied[i] - along.firstOfOccupied[i - 1]);
        const auto [g, share] = mode(gaps);
        if (g > 1 && share >= kStrideShare) {
            f.evidence.stride = g;
            stride = " = " + num(along.firstOfOccupied.front() % g) + " + " + num(g) + "k";
        }
    }
    const char* line = rowsNotCols ? "row" : "column";
    f.detail = "anomalies in " + num(along.occupied * bucket) + " " + line +
               (along.occupied * bucket == 1 ? "" : "s") + " (" + listLines(along.firstOfOccupied, bucket) +
               stride + ") of " + num(rowsNotCols ? d.rows : d.cols) + ", spanning " +
               num(across.occupied * acrossBucket) + " of " + num(spanExtent) +
               (rowsNotCols ? " columns" : " rows");
    return f;
}

std::optional<SignatureFinding> detectPeriodic(const Divergence& d)
{
    const std::vector<uint64_t>& idx = d.spatial.firstIndices;
    if (idx.size() < kMinEvidence) return std::nullopt;
    std::vector<uint64_t> starts;
    for (size_t i = 0; i < idx.size(); ++i)
        if (i == 0 || idx[i] != idx[i - 1] + 1) starts.push_back(idx[i]);
    if (starts.size() < 4) return std::nullopt;
    std::vector<uint64_t> gaps;
    for (size_t i = 1; i < starts.size(); ++i) gaps.push_back(starts[i] - starts[i - 1]);
    const uint64_t period = mode(gaps).first;
    if (mode(gaps).second < kPeriodicGapShare || period < 2) return std::nullopt;
    // A period that divides the row length or is a multiple of it draws columns, tiles or rows
    // in the 2-D view: the 2-D detectors name those.
    if (d.cols > 1 && (d.cols % period == 0 || period % d.cols == 0)) return std::nullopt;
    if ((idx.back() - idx.front()) / period < 4) return std::nullopt;  // too few periods seen
    // Phase: the most common run start modulo the period. Window: the residues (from the phase)
    // that hold kPeriodicShare of the sampled anomalies; it must cover at most half a period.
    std::vector<uint64_t> phases;
    for (uint64_t s : starts) phases.push_back(s % period);
    const uint64_t phase = mode(phases).first;
    std::vector<uint64_t> residues;
    for (uint64_t i : idx) residues.push_back((i + period - phase) % period);
    std::sort(residues.begin(), residues.end());
    const size_t cut = size_t(std::ceil(kPeriodicShare * double(residues.size()))) - 1;
    const uint64_t run = residues[cut] + 1;
    if (run * 2 > period) return std::nullopt;
    const uint64_t first = *d.spatial.firstAnomaly, last = *d.spatial.lastAnomaly;
    const double inWindow =
        double(std::upper_bound(residues.begin(), residues.end(), run - 1) - residues.begin()) /
        double(residues.size());
    SignatureFinding f =
        finding(SignatureKind::AddressRange, inWindow,
                "periodic in flat order: runs of " + num(run) + " element(s) every " + num(period) +
                    " elements (offset " + num(phase) + "), from element " + num(first) + " to " + num(last) +
                    "; " + pct(inWindow) + " of the first " + num(idx.size()) + " anomalies fit");
    f.evidence.period = period;
    f.evidence.runLength = run;
    f.evidence.range = std::make_pair(first, last + 1);
    return f;
}

std::optional<SignatureFinding> detectTiles(const Divergence& d)
{
    const TilePyramid& p = d.tiles;
    if (!p.hasCounts()) return std::nullopt;
    const double n = double(d.anomalies);
    // Anomaly-weighted mean density of the tiles holding anomalies, per level.
    std::vector<double> density(p.levels().size(), 0.0);
    double maxDensity = 0.0;
    for (size_t k = 0; k < p.levels().size(); ++k) {
        const TileLevel& l = p.levels()[k];
        if (l.tileCount() < 2) continue;
        double sum = 0.0;
        for (uint64_t t = 0; t < l.tileCount(); ++t) {
            const uint64_t a = l.anomalies[size_t(t)];
            if (a == 0) continue;
            sum += double(a) * double(a) / double(p.tileElements(k, t / l.gridCols, t % l.gridCols));
        }
        density[k] = sum / n;
        maxDensity = std::max(maxDensity, density[k]);
    }
    if (maxDensity <= 0.0) return std::nullopt;
    size_t chosen = 0;
    for (size_t k = 0; k < p.levels().size(); ++k)
        if (p.levels()[k].tileCount() >= 2 && density[k] >= kTileDensityKeep * maxDensity) chosen = k;
    const TileLevel& l = p.levels()[chosen];
    uint64_t dense = 0, inDense = 0;
    std::vector<std::pair<uint64_t, uint64_t>> tiles;
    for (uint64_t t = 0; t < l.tileCount(); ++t) {
        const uint64_t a = l.anomalies[size_t(t)];
        if (a == 0) continue;
        const uint64_t tr = t / l.gridCols, tc = t % l.gridCols;
        if (double(a) / double(p.tileElements(chosen, tr, tc)) < kDenseTile * density[chosen]) continue;
        ++dense;
        inDense += a;
        if (tiles.size() < kListed) tiles.emplace_back(tr, tc);
    }
    const double expected = expectedOccupied(
        l.tileCount(), [&](uint64_t t) { return p.tileElements(chosen, t / l.gridCols, t % l.gridCols); },
        d.elements, d.anomalies);
    const double share = double(inDense) / n;
    if (share < kDenseShare || double(dense) > kConcentrated * expected || dense >= l.tileCount())
        return std::nullopt;
    std::string list;
    for (size_t i = 0; i < std::min<size_t>(tiles.size(), 6); ++i)
        list += (i ? " (" : "(") + num(tiles[i].first) + "," + num(tiles[i].second) + ")";
    if (tiles.size() > 6) list += " ...";
    SignatureFinding f = finding(
        SignatureKind::TileClustered, share * (1.0 - double(dense) / expected),
        num(inDense) + " of " + num(d.anomalies) + " anomalies in " + num(dense) + " tile" +
            (dense == 1 ? "" : "s") + " of " + num(l.tileRows) + "x" + num(l.tileCols) +
            " elements: " + list + " (tile row, tile col), " +
            pct(double(inDense) / double(std::max<uint64_t>(1, dense * l.tileRows * l.tileCols))) + " dense");
    f.evidence.tileRows = l.tileRows;
    f.evidence.tileCols = l.tileCols;
    f.evidence.tiles = std::move(tiles);
    return f;
}

std::optional<Candidate> detectSpatial(const Divergence& d, SignatureWhere& where)
{
    if (d.anomalies < kMinEvidence || !d.spatial.firstAnomaly) return std::nullopt;
    std::optional<SignatureFinding> f = detectContiguousRange(d);
    where = SignatureWhere::AddressRange;
    if (!f) {
        f = detectPeriodic(d);
        where = SignatureWhere::Periodic;
    }
    if (!f) {
        f = detectStripe(d, true);
        where = SignatureWhere::RowStripe;
    }
    if (!f) {
        f = detectStripe(d, false);
        where = SignatureWhere::ColumnStripe;
    }
    if (!f) {
        f = detectTiles(d);
        where = SignatureWhere::Tile;
    }
    if (!f) return std::nullopt;
    return Candidate{*f, true};
}

std::optional<Candidate> detectWidespread(const Divergence& d)
{
    if (d.anomalies < kMinEvidence || !d.tiles.hasCounts()) return std::nullopt;
    const TileLevel& l = d.tiles.levels().front();
    uint64_t occupied = 0;
    for (uint64_t a : l.anomalies) occupied += a != 0 ? 1 : 0;
    const double share = double(occupied) / double(l.tileCount());
    if (share < kWidespreadTiles) return std::nullopt;
    return Candidate{
        finding(SignatureKind::Widespread, share,
                num(d.anomalies) + " anomalies (" + pct(double(d.anomalies) / double(d.elements)) +
                    " of the elements) in " + pct(share) + " of the " + num(l.tileRows) + "x" +
                    num(l.tileCols) + " tiles, no structure"),
        true};
}

std::string roundingSummary(const Divergence& d)
{
    return maxErrorText(d);
}

}  // namespace

Signature classifyDivergence(const Divergence& d)
{
    Signature sig;
    auto setPrimary = [&](const SignatureFinding& f) {
        sig.kind = f.kind;
        sig.confidence = f.confidence;
        sig.detail = f.detail;
        sig.evidence = f.evidence;
    };

    if (d.mismatches == 0) {
        setPrimary(
            finding(SignatureKind::Identical, 1.0, "all " + num(d.elements) + " elements are bit-identical"));
        return sig;
    }
    sig.what = SignatureWhat::Rounding;
    if (d.beyondTolerance == 0) {
        setPrimary(finding(SignatureKind::Rounding, 1.0,
                           num(d.mismatches) + " elements differ, all within " + d.tolerance + " (" +
                               roundingSummary(d) + ")"));
        return sig;
    }
    if (d.anomalies == 0) {
        // Everything beyond tolerance is rounding-sized: noise, unless one bit flips one way only.
        if (auto stuck =
                detectStuckBit(d, d.beyondBits, d.beyondTolerance, "beyond-tolerance elements", nullptr)) {
            setPrimary(stuck->finding);
            sig.what = SignatureWhat::StuckBit;
            return sig;
        }
        setPrimary(finding(SignatureKind::Rounding, 0.7,
                           num(d.beyondTolerance) + " elements beyond " + d.tolerance + ", but all within " +
                               num(kRoundingUlps) + " ulp: rounding-sized (a different summation order?); " +
                               roundingSummary(d)));
        return sig;
    }

    SignatureWhere spatialWhere = SignatureWhere::None;
    bool fixedBit = false;
    auto stuck = detectStuckBit(d, d.anomalyBits, d.anomalies, "anomalies", &d.anomalySingleBit);
    auto nanInf = detectNanInf(d);
    auto spatial = detectSpatial(d, spatialWhere);
    // A stuck bit belongs to a unit (lane, tile, range, or the whole tensor): every element of it
    // that had room to change changes. One-way flips at a few scattered elements are random flips
    // at a position where nearly every element held the other value (the top exponent bits of
    // normal data), so they are listed, not claimed.
    if (stuck && !spatial && double(d.anomalies) < kStuckUnitShare * double(d.elements)) {
        stuck->primaryEligible = false;
        stuck->finding.confidence *= 0.5;
        stuck->finding.detail += "; at scattered elements, not one unit: not claimed as stuck";
    }
    const bool stuckClaimed = stuck && stuck->primaryEligible;
    auto sign = stuckClaimed ? std::nullopt : detectSignFlip(d);
    auto single = (stuckClaimed || sign) ? std::nullopt : detectSingleBit(d, fixedBit);
    auto exponent = stuckClaimed ? std::nullopt : detectExponent(d);
    auto wide = spatial ? std::nullopt : detectWidespread(d);

    // What changed, most specific first (Signature.h).
    if (nanInf && nanInf->primaryEligible)
        sig.what = SignatureWhat::NanInf;
    else if (stuckClaimed)
        sig.what = SignatureWhat::StuckBit;
    else if (sign)
        sig.what = SignatureWhat::Sign;
    else if (exponent && exponent->primaryEligible)
        sig.what = SignatureWhat::Exponent;
    else if (single)
        sig.what = fixedBit ? SignatureWhat::FixedBit : SignatureWhat::RandomBit;
    else
        sig.what = SignatureWhat::MultiBit;
    // Where it is.
    if (d.anomalies == 1)
        sig.where = SignatureWhere::Element;
    else if (spatial)
        sig.where = spatialWhere;
    else if (wide)
        sig.where = SignatureWhere::Widespread;
    else
        sig.where = SignatureWhere::Scattered;

    std::vector<Candidate> candidates;
    for (auto* c : {&nanInf, &stuck, &spatial, &sign, &exponent, &single, &wide})
        if (*c) candidates.push_back(**c);
    const SignatureKind kind = signatureKindFor(sig.what, sig.where);
    auto primary = std::find_if(candidates.begin(), candidates.end(), [&](const Candidate& c) {
        return c.primaryEligible && c.finding.kind == kind;
    });
    if (primary != candidates.end()) {
        setPrimary(primary->finding);
    } else if (kind == SignatureKind::Widespread) {
        setPrimary(finding(SignatureKind::Widespread, 0.5,
                           num(d.anomalies) + " anomalies with multi-bit differences, no structure"));
    } else {
        setPrimary(finding(SignatureKind::Scattered, 0.5,
                           num(d.anomalies) + " anomalies at random places with multi-bit differences (" +
                               maxErrorText(d) + ")"));
    }
    for (auto it = candidates.begin(); it != candidates.end(); ++it)
        if (it != primary) sig.secondary.push_back(it->finding);
    if (d.mismatches > d.anomalies) {
        sig.secondary.push_back(finding(SignatureKind::Rounding, 1.0,
                                        num(d.mismatches - d.anomalies) + " further mismatches are within " +
                                            d.tolerance + " or rounding-sized (<= " + num(kRoundingUlps) +
                                            " ulp)"));
    }
    return sig;
}

}  // namespace faultline
