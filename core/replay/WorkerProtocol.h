#pragma once
// The worker's side of the faultline-worker protocol (WorkerMessages.h has the messages and
// their JSON). Outputs go to the safetensors file named in the request: tensors "output/0",
// "output/1", … and, when the target records SMs, "tile_sm" (int32, one per tile) with metadata
// "sm_tile" = tile edge. A fatal error (a sticky device error) means the worker exits after
// replying and the orchestrator starts a new one.
#include <iosfwd>
#include <string>

#include "../Result.h"
#include "../trace/Trace.h"
#include "Target.h"
#include "WorkerMessages.h"

namespace faultline {

// Serves requests from `in` until it ends, running ops of `trace` on `target`. Returns the
// process exit code (0 at end of input, 3 after a fatal error).
int serveWorkerRequests(std::istream& in, std::ostream& out, Target& target, const Trace& trace);

}  // namespace faultline
