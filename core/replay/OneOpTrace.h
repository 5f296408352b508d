#pragma once
// A trace v1 file of one op with inputs of the caller's (shrink's candidates and minimal
// reproducer, explore's conditions): the source trace's root attributes and devices, the op with
// its index, name, phase and parameters, and no recorded outputs (the inputs are not the ones
// the devices saw).
#include <map>
#include <string>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "../trace/Trace.h"

namespace faultline {

// Writes `path` (PATH.tmp renamed by TraceWriter). `inputs` are the op's inputs in order, stored
// under the op's input ids (an id two inputs share but whose tensors now differ is split into
// "<id>#<position>"). `notes` are added as root string attributes.
Status writeOneOpTrace(const Trace& source, const TraceOp& op, const std::vector<HostTensor>& inputs,
                       const std::string& path, const std::map<std::string, std::string>& notes = {});

}  // namespace faultline
