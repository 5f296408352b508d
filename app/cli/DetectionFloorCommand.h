#pragma once
// faultline benchmark --trace TRACE --suspect LABEL [--peer LABEL | --no-peer] [--elements N]
//   [--seed N] [--json] [--out DIR]: the detection floor of a captured trace
//   (core/replay/DetectionFloor.h). Exit 0: measured, no false alarm; 1: the unmodified trace
//   has divergent ops (false alarms, listed and left out of the floor); 2: error.
#include <cstdint>
#include <string>

namespace faultline::cli {

struct DetectionFloorCliOptions {
    std::string trace, suspect, peer, out;
    bool noPeer = false, json = false, quiet = false, allowExternal = false;
    uint64_t seed = 1;
    size_t elements = 8;
};

int runDetectionFloorCommand(const DetectionFloorCliOptions& o);

}  // namespace faultline::cli
