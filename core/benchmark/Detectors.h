#pragma once
// The detectors `faultline benchmark` scores on the same planted data, so users see what their
// fleet checks miss. A detector is a small interface: it sees one case (the healthy and the
// corrupted output, the GEMM inputs) and Faultline's comparison of the two, and says whether it
// raises an alarm. Add one by implementing Detector and listing it in standardDetectors().
#include <memory>
#include <string>
#include <vector>

#include "../compare/Divergence.h"
#include "PatternLibrary.h"

namespace faultline {

struct DetectorInput {
    const PatternCase& c;
    const Divergence& compare;  // suspect vs healthy under the benchmark's tolerance
};

class Detector {
public:
    virtual ~Detector() = default;
    // Stable name (JSON key): faultline_compare, faultline_bisect, gpu_burn, rel_tolerance, abft,
    // nan_loss_monitor.
    virtual std::string name() const = 0;
    // One line: what it checks, with its threshold.
    virtual std::string describe() const = 0;
    // Whether this case raises an alarm. Deterministic, no state between cases.
    virtual bool flags(const DetectorInput& in) const = 0;
};

// Faultline's compare, Faultline bisect's bound check, gpu-burn's self-compare, a relative-
// tolerance compare, ABFT row/column checksums of the GEMM and a NaN/loss-spike monitor, in
// that order.
std::vector<std::unique_ptr<Detector>> standardDetectors();

}  // namespace faultline
