#pragma once
// The faultline-worker protocol: JSON lines over the worker's stdin/stdout.
//
//   request  {"id":N, "op":INDEX, "rep":R, "seed":S, "out":"PATH.safetensors"[, "skip_if_identical_to":R0]}
//            (skip_if_identical_to: the orchestrator holds repetition R0's outputs; when the
//            target's repetition check finds this single output bitwise identical to R0's, the
//            worker writes no file and replies "identical_to_rep":R0)
//   reply    {"id":N, "ok":true, "outputs":K, "injected":E, "golden_exact":BOOL, "ms":T[,
//            "identical_to_rep":R0][, "vs_rep":{"rep":R0,
//            "mismatched":M, "flipped_bits":B, "max_abs_error":X|null, "tile":T, "worst_tile":I}]}
//            (vs_rep: the target compared output 0 with repetition R0's where it keeps it, see
//            RepeatCheck in Target.h; null max_abs_error means a NaN differed; golden_exact: the
//            output is defined to be the golden model's bit for bit, ReplayOutput::goldenExact)
//            {"id":N, "ok":false, "error":"...", "fatal":BOOL}
//   the first line the worker writes: {"hello":"faultline-worker","protocol":1,"target":LABEL,
//            "description":TEXT,"bitwise_stable":BOOL[,"peer_key":TEXT]}  (Target::peerKey)
//
// Outputs go to the safetensors file named in the request: tensors "output/0", "output/1", …
// and, when the target records SMs, "tile_sm" (int32, one per tile) with metadata
// "sm_tile" = tile edge. A fatal error (a sticky device error) means the worker exits after
// replying and the orchestrator starts a new one.
#include <iosfwd>
#include <string>

#include "../Result.h"
#include "../trace/Trace.h"
#include "Target.h"

namespace faultline {

inline constexpr int kWorkerProtocolVersion = 1;

// Serves requests from `in` until it ends, running ops of `trace` on `target`. Returns the
// process exit code (0 at end of input, 3 after a fatal error).
int serveWorkerRequests(std::istream& in, std::ostream& out, Target& target, const Trace& trace);

}  // namespace faultline
