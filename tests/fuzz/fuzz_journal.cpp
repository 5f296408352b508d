// libFuzzer target for campaign journals (RESULTS.h5.journal.jsonl), which `replay --resume` and
// the GUI's Resume read back: the input bytes are the journal. readCampaignJournal, then the
// whole summary (peers, on-device repetition checks, verdicts) and its JSON and text forms.
//
// Besides the sanitizers, it aborts when an accepted journal breaks a promise: an exception
// escapes (a field of the wrong type must make its line unreadable, not crash the summary), a
// run goes missing from the summary, a target's failures exceed its runs, or a peer group names
// a target that is in neither its agreeing nor its differing list.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/replay/Campaign.h"

using namespace faultline;

namespace {

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_journal: invariant broken: %s\n", what);
        std::abort();
    }
}

const std::string& scratchPath()
{
    static const std::string path = [] {
        const char* dir = std::getenv("TMPDIR");
        return std::string(dir && *dir ? dir : "/tmp") + "/fuzz_journal." + std::to_string(::getpid()) +
               ".jsonl";
    }();
    return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    {
        std::ofstream out(scratchPath(), std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    }
    std::vector<std::string> warnings;
    const std::vector<RunRecord> runs = readCampaignJournal(scratchPath(), warnings);
    std::set<std::string> labelSet;
    std::set<size_t> ops;
    uint32_t reps = 1;
    for (const RunRecord& r : runs) {
        labelSet.insert(r.target);
        ops.insert(r.opIndex);
        if (r.rep < 1000000) reps = std::max(reps, r.rep + 1);
    }
    const std::vector<std::string> labels(labelSet.begin(), labelSet.end());
    (void)checkJournalFits(runs, labels, std::vector<size_t>(ops.begin(), ops.end()), reps);
    // Once without and once with a reference (the first target).
    for (int pass = 0; pass < 2; ++pass) {
        const std::string reference = pass == 1 && !labels.empty() ? labels.front() : std::string();
        try {
            const CampaignReport report = summarizeCampaign(runs, labels, {}, reference);
            check(report.runs.size() == runs.size(), "the summary lost or invented runs");
            for (const TargetSummary& t : report.targets)
                check(t.failures <= t.runs, "more failures than runs");
            for (const PeerGroup& g : report.peers)
                check(g.agreeing.size() + g.differing.size() == g.targets.size(),
                      "a peer is neither agreeing nor differing");
            (void)campaignJson(report).dump();
            (void)campaignText(report);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fuzz_journal: exception from an accepted journal: %s\n", e.what());
            std::abort();
        }
    }
    return 0;
}
