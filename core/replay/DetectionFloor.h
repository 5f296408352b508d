#pragma once
// The detection floor of a captured trace (`faultline benchmark --trace`): single flipped bits
// planted at every bit position into the recorded outputs of every op bisect judges, each judged
// exactly as bisect judges that op (the peer bit for bit, the golden model exactly or within the
// op's bound: RecordedReference.h), so the figures say which corruptions of this very trace
// bisect would name. Both directions at every position: a bit set (0 -> 1: the magnitude grows
// for exponent and mantissa bits) and a bit cleared (1 -> 0: it shrinks); the sign bit flips
// either way. Elements are drawn (seeded) from those whose recorded value is finite and non-zero.
// The unmodified trace is judged first: an op it finds divergent is a false alarm, listed, and
// left out of the floor.
#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../DType.h"
#include "../Result.h"
#include "../trace/Trace.h"
#include "Bisect.h"

namespace faultline {

struct DetectionFloorOptions {
    BisectOptions bisect;       // suspect, peer / no peer: who judges, as bisect decides
    size_t elementsPerBit = 8;  // flips per bit position and direction in each judged output
    uint64_t seed = 1;
};

struct FloorCount {
    uint64_t planted = 0, detected = 0;
};

// One op kind, output dtype and judge: the ops of the trace that share them.
struct DetectionFloorRow {
    std::string op;
    DType dtype = DType::Float32;
    BisectJudge judge = BisectJudge::None;
    bool loose = false;  // a loose golden bound judged at least one of the ops
    size_t ops = 0, outputs = 0;
    std::vector<FloorCount> set, clear;  // per bit position (0 = least significant)
};

struct DetectionFloorReport {
    std::string trace, suspect, peer;
    uint64_t seed = 1;
    size_t elementsPerBit = 0;
    size_t recordedOps = 0, judgedOps = 0, floorOps = 0;
    std::vector<BisectOp> falseAlarms;  // divergent on the unmodified trace
    std::vector<DetectionFloorRow> rows;
    std::vector<std::string> warnings;  // bisect's, and outputs left out of the floor (why)
    bool cancelled = false;
};

// The bit classes the summaries group positions into: sign, exponent, the top two mantissa
// bits, the other mantissa bits.
std::string_view floorBitClass(DType t, unsigned bit);

// progress(done, total, what); cancel between ops. Errors: bisect's (unknown suspect, bad peer),
// elementsPerBit outside [1, 1024].
Result<DetectionFloorReport> measureDetectionFloor(const Trace& trace, const DetectionFloorOptions& options,
                                                   const BisectProgress& progress = {},
                                                   const std::atomic<bool>* cancel = nullptr);

// {"format":"faultline-detection-floor","trace","suspect","peer","seed","elements_per_bit",
//  "recorded_ops","judged_ops","floor_ops","false_alarms":[{index,op,name,detail,judge}],
//  "rows":[{"op","dtype","judge","loose","ops","outputs","bits":[{"bit","class",
//   "set":{"planted","detected"},"clear":{...}}],"by_class":{class:{"planted","detected","rate"}}}],
//  "by_judge":{judge:{class:{...}}}, "by_class":{...}, "warnings":[...]}
nlohmann::json detectionFloorJson(const DetectionFloorReport& report);
std::string detectionFloorText(const DetectionFloorReport& report);

}  // namespace faultline
