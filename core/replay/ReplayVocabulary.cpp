#include "ReplayVocabulary.h"

namespace faultline {
namespace {

// The value among `all` whose name is `name`.
template <class E, size_t N, class NameOf>
std::optional<E> parseByName(std::string_view name, const E (&all)[N], NameOf nameOf)
{
    for (E v : all)
        if (nameOf(v) == name) return v;
    return std::nullopt;
}

}  // namespace

std::optional<RunOutcome> parseRunOutcome(std::string_view name)
{
    static constexpr RunOutcome all[] = {RunOutcome::Ok, RunOutcome::Mismatch, RunOutcome::Hang,
                                         RunOutcome::Crash, RunOutcome::Error};
    return parseByName(name, all, runOutcomeName);
}

std::optional<StoppedBy> parseStoppedBy(std::string_view name)
{
    static constexpr StoppedBy all[] = {StoppedBy::Failure, StoppedBy::Rate, StoppedBy::Budget,
                                        StoppedBy::Cancelled};
    return parseByName(name, all, stoppedByName);
}

std::optional<Verdict> parseVerdict(std::string_view name)
{
    static constexpr Verdict all[] = {Verdict::Healthy, Verdict::Transient, Verdict::Persistent,
                                      Verdict::DeviceSpecific, Verdict::NoVerdict};
    return parseByName(name, all, verdictName);
}

std::optional<PeerBasis> parsePeerBasis(std::string_view name)
{
    static constexpr PeerBasis all[] = {PeerBasis::Reference, PeerBasis::Majority, PeerBasis::None};
    return parseByName(name, all, peerBasisName);
}

std::optional<BisectVerdict> parseBisectVerdict(std::string_view name)
{
    static constexpr BisectVerdict all[] = {BisectVerdict::Ok, BisectVerdict::Divergent,
                                            BisectVerdict::Skipped, BisectVerdict::Error};
    return parseByName(name, all, bisectVerdictName);
}

std::optional<BisectJudge> parseBisectJudge(std::string_view name)
{
    static constexpr BisectJudge all[] = {BisectJudge::Peer, BisectJudge::GoldenExact,
                                          BisectJudge::GoldenBound, BisectJudge::None};
    return parseByName(name, all, bisectJudgeName);
}

}  // namespace faultline
