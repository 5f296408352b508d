#pragma once
// What a results file shows, as headline lines and tables of text: the GUI's results tab draws
// them as they are, so what a file says (verdicts, rates with their intervals, per-op counts,
// runs, a bundle's check) is decided here, once, and testable without Qt. Every text from the
// file is made printable (control characters escaped): results files come from other machines.
//
//   campaign  Verdicts (target, verdict, failures, rate with its 95% interval, deterministic,
//             reason), Ops (per op and target; in an adaptive campaign what stopped its runs and
//             what they rule out, in the CLI's words: stoppedByText), Runs (the listed runs)
//   compare   Tensors (most severe first)
//   health    GPUs (identity, recommendation, Xids, reasons), Events
//   evidence  Check (`faultline verify`: problems, or that it is intact), Targets (role in the
//             case), RMA reasons, Checklist, Files
//   sweep, collective  GPUs and Links (the links view draws the matrix)
//   fleet     Verdicts of the fleet's GPUs (the fleet view draws the table)
//   explore   Conditions (per condition and target: kind, failures, rate with its interval or what
//             the clean runs rule out, fired or never); the findings as headline lines (the
//             results view draws the rates by condition: RateByCondition.h)
#include <string>
#include <vector>

#include "ResultFile.h"

namespace faultline {

struct ResultTable {
    std::string title;
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;  // each as long as columns
    std::string note;                            // "10,000 of 25,000 runs listed", or ""
};

struct ResultSummary {
    std::string title;               // "Campaign RESULTS.h5"
    std::vector<std::string> lines;  // headline, most important first
    std::vector<ResultTable> tables;
};

// At most this many rows per table (a note says how many were left out).
inline constexpr size_t kResultTableRows = 20000;

ResultSummary summarizeResult(const ResultDocument& doc);

}  // namespace faultline
