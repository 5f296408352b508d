#pragma once
// The embedded demo incident, built by real computation: a pre-norm transformer block
// (causal attention + GELU MLP) trained for a few SGD steps with two data-parallel ranks and a
// gradient all_reduce. It is trained twice: a healthy run (both ranks on the golden model) and
// the incident run, where rank 1 runs on a simulated GPU whose SM 7 corrupts the GEMM tiles it
// computes. The incident's last step is captured as a trace v1 file: every op rank 1 ran, with
// its inputs, what the suspect GPU (gpu1) produced, and what a healthy GPU (gpu0) produced from
// the same inputs. Per-step checkpoints (weights and gradients) of both ranks and both runs are
// written as HDF5 snapshots.
//
// The demo trains the MLP weights (W1, W2); attention and norm weights stay fixed, which keeps
// every recorded op one of the trace v1 ops.
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

struct DemoOptions {
    std::string outDir = "faultline-demo";
    uint32_t steps = 3;
    uint64_t seed = 20261129;
    // The suspect device's defect, as a sim target spec.
    std::string suspectDefect = "sim:sm:sm=7,sms=16,tile=32,rate=0.05,op=gemm";
};

struct DemoIncident {
    std::string tracePath;
    std::string suspectLabel = "gpu1";
    std::string referenceLabel = "gpu0";
    std::string suspectDefect;
    std::vector<std::string> healthyCheckpoints;    // per step and rank
    std::vector<std::string> incidentCheckpoints;   // same order
    std::vector<double> healthyLoss, incidentLoss;  // mean over ranks, per step
    size_t opsRecorded = 0;
};

// Builds the incident under options.outDir (created). Deterministic for a seed.
Result<DemoIncident> buildDemoIncident(const DemoOptions& options);

}  // namespace faultline
