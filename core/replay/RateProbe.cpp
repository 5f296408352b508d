#include "RateProbe.h"

#include <vector>

#include "Campaign.h"

namespace faultline {

Result<std::optional<ScratchDirectory>> ensureScratchDirectory(RateProbeSetup& setup,
                                                               const std::string& prefix,
                                                               const std::string& what)
{
    if (!setup.scratchDir.empty()) return std::optional<ScratchDirectory>();
    auto made = ScratchDirectory::create(ScratchDirectory::systemTemp(), prefix);
    if (!made)
        return Error{"cannot create a scratch directory for " + what + ": " + made.error().message,
                     ErrorCode::Io};
    setup.scratchDir = made->path();
    return std::optional<ScratchDirectory>(std::move(made).value());
}

Result<RateMeasure> measureOpRate(const std::string& tracePath, size_t opIndex, const TargetSpec& target,
                                  const RateRule& rule, double confidence, std::chrono::milliseconds budget,
                                  const RateProbeSetup& setup)
{
    CampaignOptions c;
    c.tracePath = tracePath;
    c.targets = {target};
    c.ops = std::to_string(opIndex);
    c.stopping.until = rule;
    c.stopping.budget = budget;
    c.seed = setup.seed;
    c.timeout = setup.timeout;
    c.workerProgram = setup.workerProgram;
    c.allowExternal = setup.allowExternal;
    c.scratchDir = setup.scratchDir;
    Campaign campaign(c);
    campaign.setCancelFlag(setup.cancel);
    auto report = campaign.run();
    RateMeasure m;
    if (!report) {
        // A trace none of whose selected ops the golden model can run: the cut was too much for
        // the op. Anything else (a target that cannot start, an unreadable file) is an error.
        if (report.error().code != ErrorCode::Format) return report.error();
        m.replayable = false;
        m.notReplayable = report.error().message;
        return m;
    }
    std::vector<double> ms;
    for (const OpTargetStats& s : report->stats)
        if (s.opIndex == opIndex && s.target == target.text) {
            m.runs = s.runs;
            m.failures = s.failures;
        }
    for (const RunRecord& r : report->runs) {
        if (!r.setupError && r.ms >= 0) ms.push_back(r.ms);
        if (!r.failed() || !r.vsGolden.is_object() || !r.vsGolden.contains("sms") ||
            !r.vsGolden["sms"].is_array())
            continue;
        ++m.failedRunsWithSms;
        for (const auto& sm : r.vsGolden["sms"])
            if (sm.is_number_integer()) ++m.failedRunsBySm[sm.get<int32_t>()];
    }
    if (m.runs == 0 && report->targets.size() == 1 && report->targets[0].notReplayable > 0) {
        m.replayable = false;
        m.notReplayable = "the golden model cannot replay the op";
        return m;
    }
    m.msPerRun = medianOf(ms);
    m.interval = wilsonInterval(m.failures, m.runs, zForConfidence(confidence));
    m.decided = rule(m.runs, m.failures);
    return m;
}

RateRule insideIntervalRule(const RateInterval& reference, uint64_t runs, double confidence)
{
    const double z = zForConfidence(confidence);
    return [reference, runs, z](uint64_t n, uint64_t failures) {
        if (n >= runs) return true;
        const RateInterval own = wilsonInterval(failures, n, z);
        return n > 0 && (own.high < reference.low || own.low > reference.high);
    };
}

bool reproducesInside(const RateMeasure& m, const RateInterval& reference)
{
    return m.replayable && m.decided && m.runs > 0 && m.interval.rate >= reference.low &&
           m.interval.rate <= reference.high;
}

}  // namespace faultline
