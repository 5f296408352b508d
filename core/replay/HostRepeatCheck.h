#pragma once
// The repetition check (Target.h, RepeatCheck) for targets whose outputs live in host memory
// (cpu, sim): the first repetition of the op last run keeps its output 0, and a later repetition
// of the same op is compared with it bit by bit. The same answer a cuda target gives from the
// device, so the orchestrator treats every target alike (and need not take a copy of a
// repetition that came out identical, see WorkerProtocol.h).
#include <cstdint>
#include <optional>

#include "../HostTensor.h"
#include "Target.h"

namespace faultline {

class HostRepeatCheck {
public:
    // Compares `output0` of op `opIndex`, repetition `rep` with the kept repetition of the same
    // op (nullopt when there is none: it is then kept in its place).
    std::optional<RepeatCheck> check(size_t opIndex, uint32_t rep, const HostTensor& output0);

private:
    bool m_valid = false;
    size_t m_opIndex = 0;
    uint32_t m_rep = 0;
    HostTensor m_kept;
};

// Bitwise comparison of two tensors of the same dtype and shape: elements whose bits differ,
// flipped bits, and the largest absolute difference (+inf where a NaN or Inf is involved; 0 for
// integers). tile = 0 and worstTile = -1: no tile statistics.
RepeatCheck compareRepetitions(const HostTensor& output, const HostTensor& kept, uint32_t keptRep);

}  // namespace faultline
