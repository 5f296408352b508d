#pragma once
// Planted corruption for `faultline benchmark`: a seeded library of patterns. Each case is one
// GEMM output, healthy and corrupted, with the truth of what was planted: what changed, where,
// and the signature kind that names the pair (SignatureAxes.h: signatureKindFor).
//
// The healthy output is the CPU golden model's C = A·B (core/golden: float accumulation in its
// defined order, rounded to the dtype) of Gaussian float32 inputs (A rows x k, B k x cols,
// k = kInnerDim). Corruption comes from the simulated fault models (FaultModel.h: flip, stuck-bit, sm,
// range, nan) where one plants the pattern, else from the library's own planting (sign flips,
// unrelated values, rows, columns, periodic runs, single elements). A case may also carry benign
// rounding noise (kNoiseShare of the elements moved by 1-2 ulp) under the corruption.
//
// Truth of where for random placement: `widespread` when the planted elements lie in at least
// half of the 16 x 16 tiles (the comparison's finest level), else `scattered`; `element` for one.
//
// Groups: `single` (one planted pattern), `combined` (two at once, e.g. a stuck bit inside one
// SM's tiles), `clean` (no corruption: false alarms), `bit_sweep` (one bit position flipped at
// random elements, every position of every dtype, for detection by bit position).
// Same options, same seed: the same specs and the same bits, on any machine.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../DType.h"
#include "../HostTensor.h"
#include "../Result.h"
#include "../compare/SignatureAxes.h"

namespace faultline {

inline constexpr uint64_t kInnerDim = 32;
inline constexpr double kNoiseShare = 0.3;
inline constexpr uint64_t kMinScattered = 16;  // planted elements of a rate pattern, at least

struct PatternSpec {
    std::string pattern;  // library name (patternNames())
    std::string group;    // single | combined | clean | bit_sweep
    DType dtype = DType::Float32;
    uint64_t rows = 0, cols = 0;
    double rate = 0.0;        // fraction of the elements planted (0: a structural pattern)
    int bit = -1;             // the planted bit position (-1: none, or random positions)
    int value = -1;           // stuck_bit: the value the bit is stuck at
    bool noise = false;       // benign 1-2 ulp rounding noise under the corruption
    uint64_t seed = 0;        // this case's seed (derived from the set's seed)
    uint64_t withinUlps = 2;  // PatternSetOptions::withinUlps
};

// A case's readable identity: "f32 256x512 stuck_lane bit=22 value=1 +noise".
std::string patternCaseId(const PatternSpec& spec);

struct PatternCase {
    PatternSpec spec;
    std::vector<HostTensor> inputs;  // the GEMM's A [rows, k] and B [k, cols], float32
    HostTensor healthy, suspect;     // dtype, shape [rows, cols]
    uint64_t planted = 0;            // elements the corruption changed
    // Truth.
    SignatureWhat what = SignatureWhat::None;
    SignatureWhere where = SignatureWhere::None;
    SignatureKind kind = SignatureKind::Identical;
};

struct PatternSetOptions {
    uint64_t seed = 1;
    std::vector<std::pair<uint64_t, uint64_t>> sizes = {{256, 512}, {512, 1024}};
    std::vector<DType> dtypes = {DType::Float32, DType::BFloat16, DType::Float16};
    bool noiseVariants = true;  // every single/combined/clean case also under noise
    bool combined = true;
    bool clean = true;
    bool bitSweep = true;  // on the first size only
};

// The library's pattern names, in the order specs are generated.
std::vector<std::string> patternNames();

// The cases of a set, without their tensors (cheap). Errors: an empty size or dtype list, a size
// with a side under 64 or fewer than 4 tiles of 64 x 64 elements (a tile must be a part, not the
// whole), a dtype other than float32, bfloat16, float16.
Result<std::vector<PatternSpec>> patternSpecs(const PatternSetOptions& options);

// Builds one case's tensors and truth. Errors: an unknown pattern, a fault model or golden op
// that refuses its parameters (a bug: the message names the pattern).
Result<PatternCase> generatePattern(const PatternSpec& spec);

}  // namespace faultline
