#pragma once
// The words replay and bisect judge with, as types. Each has one name function giving the string
// that JSON, journals, results files and text output use (public: those strings never change),
// and a parse function for reading them back (nullopt for a word this build does not know).
#include <optional>
#include <string>
#include <string_view>

namespace faultline {

// How one run (target, op, repetition) of a campaign ended.
enum class RunOutcome {
    Ok,        // ran; output within the judgement (bits or bound)
    Mismatch,  // ran; output outside it
    Hang,      // no answer within the timeout; the worker was killed
    Crash,     // the worker died during the run
    Error,     // the run could not be judged: the target failed (maybe a device fault) or setup did
};

// What a campaign concludes about a target from its runs.
enum class Verdict {
    Healthy,         // no failing run
    Transient,       // some runs of some ops failed, not reproducibly
    Persistent,      // an op failed on every repetition
    DeviceSpecific,  // failures where other targets of the campaign were clean
    NoVerdict,       // no run executed on the target: nothing to judge it by
};

// What decided the bits a group of peers must reproduce.
enum class PeerBasis {
    Reference,  // the reference target's (CampaignOptions::reference)
    Majority,   // a strict majority of the peers
    None,       // nothing decides: the peers split with no reference
};

// What bisect found for one op.
enum class BisectVerdict {
    Ok,         // recorded output within the golden model's bound
    Divergent,  // beyond it
    Skipped,    // no golden op, or nothing recorded for the suspect
    Error,      // the op could not be checked (bad inputs or parameters)
};

// What judged one op's recorded output in bisect, strictest first (docs/DESIGN "Judging real
// kernels").
enum class BisectJudge {
    Peer,         // bit for bit against a healthy peer's output computed from the same inputs
    GoldenExact,  // against the golden model with a bound of 0 for every element
    GoldenBound,  // against the golden model within the op's error bound (strict or loose)
    None,         // nothing judged it (the reason says why)
};

// What ended an adaptive campaign's runs of one op on one target (replay --until-rate).
enum class StoppedBy {
    Failure,    // a run failed: the defect reproduced
    Rate,       // no failure, and the upper confidence bound of the rate fell below the rate asked for
    Budget,     // the time budget was spent first
    Cancelled,  // the campaign was cancelled first
};

constexpr std::string_view runOutcomeName(RunOutcome v)
{
    switch (v) {
        case RunOutcome::Ok:
            return "ok";
        case RunOutcome::Mismatch:
            return "mismatch";
        case RunOutcome::Hang:
            return "hang";
        case RunOutcome::Crash:
            return "crash";
        case RunOutcome::Error:
            return "error";
    }
    return "error";
}

constexpr std::string_view verdictName(Verdict v)
{
    switch (v) {
        case Verdict::Healthy:
            return "healthy";
        case Verdict::Transient:
            return "transient";
        case Verdict::Persistent:
            return "persistent";
        case Verdict::DeviceSpecific:
            return "device-specific";
        case Verdict::NoVerdict:
            return "none";
    }
    return "healthy";
}

constexpr std::string_view peerBasisName(PeerBasis v)
{
    switch (v) {
        case PeerBasis::Reference:
            return "reference";
        case PeerBasis::Majority:
            return "majority";
        case PeerBasis::None:
            return "none";
    }
    return "none";
}

constexpr std::string_view bisectVerdictName(BisectVerdict v)
{
    switch (v) {
        case BisectVerdict::Ok:
            return "ok";
        case BisectVerdict::Divergent:
            return "divergent";
        case BisectVerdict::Skipped:
            return "skipped";
        case BisectVerdict::Error:
            return "error";
    }
    return "error";
}

constexpr std::string_view bisectJudgeName(BisectJudge v)
{
    switch (v) {
        case BisectJudge::Peer:
            return "peer";
        case BisectJudge::GoldenExact:
            return "golden_exact";
        case BisectJudge::GoldenBound:
            return "golden_bound";
        case BisectJudge::None:
            return "none";
    }
    return "none";
}

constexpr std::string_view stoppedByName(StoppedBy v)
{
    switch (v) {
        case StoppedBy::Failure:
            return "failure";
        case StoppedBy::Rate:
            return "rate";
        case StoppedBy::Budget:
            return "budget";
        case StoppedBy::Cancelled:
            return "cancelled";
    }
    return "budget";
}

std::optional<RunOutcome> parseRunOutcome(std::string_view name);
std::optional<StoppedBy> parseStoppedBy(std::string_view name);
std::optional<Verdict> parseVerdict(std::string_view name);
std::optional<PeerBasis> parsePeerBasis(std::string_view name);
std::optional<BisectVerdict> parseBisectVerdict(std::string_view name);
std::optional<BisectJudge> parseBisectJudge(std::string_view name);

// The names as std::string, for JSON and text. (Not "toString": that name is Qt Test's hook for
// printing values, with another signature.)
inline std::string nameOf(RunOutcome v)
{
    return std::string(runOutcomeName(v));
}
inline std::string nameOf(Verdict v)
{
    return std::string(verdictName(v));
}
inline std::string nameOf(PeerBasis v)
{
    return std::string(peerBasisName(v));
}
inline std::string nameOf(BisectVerdict v)
{
    return std::string(bisectVerdictName(v));
}
inline std::string nameOf(StoppedBy v)
{
    return std::string(stoppedByName(v));
}
inline std::string nameOf(BisectJudge v)
{
    return std::string(bisectJudgeName(v));
}

}  // namespace faultline
