#include "EvidenceCase.h"
#include "../JsonFields.h"

#include <cstdio>
#include <set>

#include "../Text.h"
#include "../replay/Statistics.h"

namespace faultline {
namespace {

using json = nlohmann::json;

json textOrNull(const std::string& s)
{
    return s.empty() ? json() : json(s);
}

bool flag(const json& g, const char* name)
{
    auto f = g.find("flags");
    return f != g.end() && f->is_object() && f->value(name, false);
}

// Per Xid code: count, first and last time, name.
json xidSummary(const json& events)
{
    std::map<int, json> byCode;
    for (const json& e : events) {
        if (!e.is_object() || !e.contains("xid") || !e["xid"].is_number_integer()) continue;
        const int code = e["xid"].get<int>();
        json& s = byCode[code];
        if (s.is_null())
            s = {{"xid", code},
                 {"kind", jsonString(e, "kind")},
                 {"count", 0},
                 {"first", textOrNull(jsonString(e, "time"))},
                 {"name", jsonString(e, "name")},
                 {"meaning", jsonString(e, "meaning")}};
        s["count"] = s["count"].get<int>() + 1;
        s["last"] = textOrNull(jsonString(e, "time"));
    }
    json out = json::array();
    for (auto& [code, s] : byCode) out.push_back(std::move(s));
    return out;
}

json gpuCaseJson(const json& g, bool suspect)
{
    const json snapshots = g.value("snapshots", json::array());
    json snaps = json::array();
    for (const json& s : snapshots)
        snaps.push_back({{"source", s.value("source", json())}, {"timestamp", s.value("timestamp", json())}});
    const json events = g.value("events", json::array());
    return {{"role", suspect ? "suspect" : "other"},
            {"bus_id", g.value("bus_id", json())},
            {"uuid", g.value("uuid", json())},
            {"serial", g.value("serial", json())},
            {"product", g.value("product", json())},
            {"identity", g.value("identity", json())},
            {"flags", g.value("flags", json::object())},
            {"counters_before", snapshots.empty() ? json() : snapshots.front().value("counters", json())},
            {"counters_after", snapshots.size() < 2 ? json() : snapshots.back().value("counters", json())},
            {"snapshots", snaps},
            {"events", events.size()},
            {"xid_summary", xidSummary(events)},
            {"recommendation", g.value("recommendation", json())},
            {"recommendation_reasons", g.value("recommendation_reasons", json::array())}};
}

bool sameGpu(const json& g, const SuspectGpu& s)
{
    return (!s.busId.empty() && jsonString(g, "bus_id") == s.busId) ||
           (!s.uuid.empty() && jsonString(g, "uuid") == s.uuid) ||
           (!s.serial.empty() && jsonString(g, "serial") == s.serial);
}

json symptomJson(const EvidenceFigureInput& f)
{
    const Divergence& d = f.divergence;
    json region;
    if (d.beyondRegion)
        region = {{"rows", {d.beyondRegion->rowBegin, d.beyondRegion->rowEnd}},
                  {"cols", {d.beyondRegion->colBegin, d.beyondRegion->colEnd}}};
    json secondary = json::array();
    for (const SignatureFinding& s : d.signature.secondary)
        secondary.push_back({{"kind", std::string(signatureKindName(s.kind))}, {"detail", s.detail}});
    return {{"op_index", f.opIndex},
            {"op", f.op},
            {"name", f.name},
            {"device", f.suspectLabel},
            {"compared_with", "the golden model on the op's recorded inputs"},
            {"dtype", std::string(dtypeName(d.dtype))},
            {"shape", d.shape},
            {"elements", d.elements},
            {"mismatches", d.mismatches},
            {"beyond_tolerance", d.beyondTolerance},
            {"max_ulp", d.maxUlp},
            {"max_abs_error", d.absError.max},
            {"nan_introduced", d.nanIntroduced},
            {"inf_introduced", d.infIntroduced},
            {"signature", std::string(signatureKindName(d.signature.kind))},
            {"signature_detail", d.signature.detail},
            {"also", secondary},
            {"region", region},
            {"bit_flips", d.bits.flips}};
}

}  // namespace

void EvidenceCase::finish()
{
    const json& g = suspect.health;
    auto has = [&](const char* role) {
        for (const EvidenceFile& f : files)
            if (f.role == role) return true;
        return false;
    };
    auto add = [&](std::string item, bool present, bool required, std::string detail, std::string warning) {
        if (!present && !warning.empty()) warnings.push_back(warning);
        checklist.push_back({std::move(item), present, required, std::move(detail)});
    };
    std::string ids;
    if (!suspect.serial.empty()) ids += "serial " + suspect.serial;
    if (!suspect.uuid.empty()) ids += (ids.empty() ? "" : ", ") + suspect.uuid;
    if (!suspect.busId.empty()) ids += (ids.empty() ? "bus " : ", bus ") + suspect.busId;
    add("suspect GPU identity (serial, UUID, bus id)", !ids.empty(), true,
        ids + " (from " + suspect.source + ")", "");
    add("board serial number", !suspect.serial.empty(), false, suspect.serial,
        "no board serial for the suspect GPU: the vendor matches an RMA to a board by its serial (give the "
        "nvidia-smi -q -x snapshot)");
    add("nvidia-bug-report log", has("bug_report"), false, has("bug_report") ? "in vendor/" : "",
        "no nvidia-bug-report log: NVIDIA's RMA process asks for nvidia-bug-report.sh output taken right "
        "after "
        "the failure (give it with --logs or --attach)");
    const size_t snapshots = g.is_object() ? g.value("snapshots", json::array()).size() : 0;
    add("health snapshot before the reset", snapshots >= 1, false,
        snapshots ? std::to_string(snapshots) + " snapshot(s); the first is taken as before the reset" : "",
        "no pre-reset health snapshot of the suspect GPU (give nvidia-smi -q -x output taken before "
        "resetting it "
        "with --nvidia-smi, first)");
    add("health snapshot after the reset", snapshots >= 2, false, snapshots >= 2 ? "the last snapshot" : "",
        "");
    const size_t events = g.is_object() ? g.value("events", json::array()).size() : 0;
    add("kernel log events of the suspect", events > 0, false, std::to_string(events) + " Xid/SXid event(s)",
        "");
    add("field diagnostic / DCGM output", has("attachment"), false, has("attachment") ? "in vendor/" : "",
        "");
    // Reproduction: only what the suspect's own targets did (core/evidence/SuspectTargets.h).
    std::vector<const CampaignTargetEvidence*> mine;
    if (campaign)
        for (const CampaignTargetEvidence& t : campaign->targets)
            if (targets.isSuspect(t.target)) mine.push_back(&t);
    uint64_t mineRuns = 0, mineFailures = 0;
    std::string repro, mineNames;
    for (const CampaignTargetEvidence* t : mine) {
        mineRuns += t->runs;
        mineFailures += t->failures;
        mineNames += (mineNames.empty() ? "" : ", ") + t->target;
        repro += (repro.empty() ? "" : "; ") + t->target + " " + nameOf(t->verdict) + ", " +
                 std::to_string(t->failures) + "/" + std::to_string(t->runs) + " runs failed";
    }
    const bool reproduced = mineFailures > 0 && reproducer;
    std::string noRepro;
    if (!campaign)
        noRepro = "no reproduction: no replay campaign was given (--campaign RESULTS.h5)";
    else if (mine.empty())
        noRepro = "no reproduction of the suspect GPU: no target of the campaign ran on it";
    else if (mineFailures == 0)
        noRepro = "no reproduction: the suspect's target(s) " + mineNames + " failed none of " +
                  std::to_string(mineRuns) + " runs (rate < " + rateBoundText(cleanRateBound(mineRuns)) +
                  " at 95%)";
    else
        noRepro =
            "no reproduction: the campaign diverged on the suspect but its trace was not found, so there is "
            "no "
            "reproducer";
    add("reproduction on replay", reproduced, false, repro, noRepro);
    add("signature (chain of custody)", !signedBy.empty(), false, signedBy.empty() ? "" : "key " + signedBy,
        "unsigned: give --sign KEY (faultline keygen KEY) for a minisign signature of the manifest");

    // Candidate RMA reasons.
    if (g.is_object()) {
        for (const json& r : g.value("recommendation_reasons", json::array()))
            if (jsonString(r, "action") == "rma_candidate") rmaReasons.push_back(jsonString(r, "reason"));
        if (flag(g, "row_remap_failure") && rmaReasons.empty())
            rmaReasons.push_back("row remapping failure: the GPU ran out of spare rows to remap");
        if (flag(g, "sram_threshold_exceeded") && rmaReasons.empty())
            rmaReasons.push_back("SRAM uncorrectable error threshold exceeded");
    }
    auto failed = [](const CampaignTargetEvidence& t) {
        return std::to_string(t.failures) + " of " + std::to_string(t.runs) + " runs (" +
               percentText(t.rate.rate) + ", 95% CI " + percentText(t.rate.low) + "-" +
               percentText(t.rate.high) + ") on op(s) " + opListArgument(t.failingOps) + ", verdict " +
               nameOf(t.verdict);
    };
    if (campaign)
        for (const CampaignTargetEvidence* t : campaign->divergingTargets()) {
            const TargetTie* tie = targets.find(t->target);
            if (!targets.isSuspect(t->target)) {
                // Another GPU, a simulation, the golden model: context, never the suspect's evidence.
                if (t->failures > 0)
                    otherTargets.push_back(t->target + " (" + (tie ? tie->how : "not the suspect GPU") +
                                           ") failed " + failed(*t) +
                                           ": context only, not evidence about the suspect");
                continue;
            }
            if (t->verdict != Verdict::Persistent && t->verdict != Verdict::DeviceSpecific) continue;
            if (tie && tie->role == TargetRole::SuspectStandIn)
                rmaReasons.push_back(
                    "simulated: silent data corruption reproduced on the suspect's simulated "
                    "stand-in " +
                    t->target + " (the trace declares the suspect simulated by it), which failed " +
                    failed(*t));
            else
                rmaReasons.push_back("silent data corruption reproduced on replay on the suspect GPU: " +
                                     t->target + " failed " + failed(*t));
        }

    // What was ruled out.
    if (campaign)
        for (const CampaignTargetEvidence& t : campaign->targets)
            if (t.verdict == Verdict::Healthy && t.runs > 0 && !targets.isSuspect(t.target))
                ruledOut.push_back(
                    (t.target == "cpu"
                         ? "a software or data cause: the golden model (cpu) replayed the same ops on "
                           "the same recorded inputs correctly in "
                         : "a cause shared by all devices: " + t.target + " (" + t.description +
                               ") replayed the same ops correctly in ") +
                    std::to_string(t.runs) + " runs");
    if (g.is_object() && events > 0) {
        static const std::set<int> application = {13, 31, 43, 45};
        bool appXid = false;
        for (const json& e : g.value("events", json::array()))
            if (e.value("xid", 0) > 0 && application.count(e.value("xid", 0))) appXid = true;
        if (!appXid)
            ruledOut.push_back("an application fault: no application Xid (13, 31, 43, 45) on the suspect");
    }
    // Kernel log events of other GPUs only: context, said so.
    if (health.is_object() && events == 0) {
        std::string whose;
        size_t foreign = 0;
        for (const json& o : health.value("gpus", json::array())) {
            if (sameGpu(o, suspect)) continue;
            const size_t n = o.value("events", json::array()).size();
            if (!n) continue;
            foreign += n;
            whose += (whose.empty() ? "" : ", ") + std::string("bus ") + jsonString(o, "bus_id") +
                     (jsonString(o, "serial").empty() ? "" : " (serial " + jsonString(o, "serial") + ")") +
                     ": " + std::to_string(n);
        }
        const size_t unattributed = health.value("unattributed_events", json::array()).size();
        if (unattributed)
            whose +=
                (whose.empty() ? "" : ", ") + std::string("no GPU named: ") + std::to_string(unattributed);
        if (foreign + unattributed > 0)
            warnings.push_back("kernel logs: none of the " + std::to_string(foreign + unattributed) +
                               " Xid/SXid event(s) is the suspect GPU's (" + whose +
                               "); they are shown as context about other GPUs, not as evidence about the "
                               "suspect");
    }
    if (health.is_object()) {
        size_t quiet = 0, others = 0;
        for (const json& o : health.value("gpus", json::array())) {
            if (sameGpu(o, suspect)) continue;
            ++others;
            if (jsonString(o, "recommendation") == "none" && o.value("events", json::array()).empty())
                ++quiet;
        }
        if (others && quiet == others)
            ruledOut.push_back("a host-wide cause (power, cooling, driver): the " + std::to_string(others) +
                               " other GPU(s) on the host show no Xid event and no flag");
    }
}

json evidenceCaseJson(const EvidenceCase& c)
{
    json gpus = json::array();
    bool suspectListed = false;
    if (c.health.is_object())
        for (const json& g : c.health.value("gpus", json::array())) {
            const bool s = sameGpu(g, c.suspect);
            suspectListed = suspectListed || s;
            gpus.push_back(gpuCaseJson(g, s));
        }
    if (!suspectListed)
        gpus.insert(gpus.begin(), json{{"role", "suspect"},
                                       {"bus_id", textOrNull(c.suspect.busId)},
                                       {"uuid", textOrNull(c.suspect.uuid)},
                                       {"serial", textOrNull(c.suspect.serial)},
                                       {"product", textOrNull(c.suspect.product)},
                                       {"flags", json::object()},
                                       {"counters_before", json()},
                                       {"counters_after", json()},
                                       {"snapshots", json::array()},
                                       {"events", 0},
                                       {"xid_summary", json::array()},
                                       {"recommendation", json()},
                                       {"recommendation_reasons", json::array()}});
    std::string driver, cuda;
    if (c.suspect.health.is_object() && c.suspect.health.contains("identity")) {
        driver = jsonString(c.suspect.health["identity"], "driver_version");
        cuda = jsonString(c.suspect.health["identity"], "cuda_version");
    }
    json reproducer;
    if (c.reproducer) {
        json verdicts = json::object();
        for (const auto& [t, v] : c.reproducer->expectedVerdicts) verdicts[t] = nameOf(v);
        const ReproducerFiles& r = *c.reproducer;
        reproducer = {{"trace", "reproducer/trace.h5"},
                      {"script", "reproducer/reproduce.sh"},
                      {"command", textOrNull(r.command)},
                      {"ops", r.ops},
                      {"replayable", r.replayable},
                      {"not_replayable", textOrNull(r.notReplayable)},
                      {"fleet_gpu", textOrNull(r.fleetGpu)},
                      {"shrunk_from", textOrNull(r.shrunkFrom)},
                      {"suspect_targets", r.suspectTargets},
                      {"reps",
                       {{"reps", r.reps.reps},
                        {"failures", r.reps.failures},
                        {"runs", r.reps.runs},
                        {"rate", r.reps.rate},
                        {"ops", r.reps.ops},
                        {"confidence", kReproducerConfidence},
                        {"probability", r.reps.probability},
                        {"capped", r.reps.capped},
                        {"formula", "ceil(ln(1 - confidence) / (ops * ln(1 - rate))), at least " +
                                        std::to_string(kMinReproducerReps) + ", at most " +
                                        std::to_string(kMaxReproducerReps)}}},
                      {"expected",
                       {{"exit_code", r.replayable ? json(r.expectedExitCode) : json(2)},
                        {"verdicts", verdicts},
                        {"must_fail", r.mustFail}}}};
    }
    json replay;
    if (c.campaign) {
        replay = campaignEvidenceJson(*c.campaign);
        json mine = json::array();
        bool suspectFailed = false;
        for (json& t : replay["targets"]) {
            const std::string label = t.value("target", "");
            const TargetTie* tie = c.targets.find(label);
            t["role"] = tie ? targetRoleName(tie->role) : "untied";
            t["tied_by"] = tie ? tie->how : std::string();
            t["gpu"] = tie && !tie->gpu.empty() ? json{{"uuid", textOrNull(tie->gpu.uuid)},
                                                       {"serial", textOrNull(tie->gpu.serial)},
                                                       {"bus_id", textOrNull(tie->gpu.busId)}}
                                                : json();
            const bool isSuspect = c.targets.isSuspect(label);
            t["suspect"] = isSuspect;
            if (isSuspect) {
                mine.push_back(label);
                suspectFailed = suspectFailed || t.value("failures", 0) > 0;
            }
        }
        replay["suspect_targets"] = mine;
        replay["suspect_ops"] = suspectDivergentOps(*c.campaign, c.targets);
        replay["suspect_reproduced"] = suspectFailed;
    }
    json checklist = json::array();
    for (const ChecklistItem& i : c.checklist)
        checklist.push_back(
            {{"item", i.item}, {"present", i.present}, {"required", i.required}, {"detail", i.detail}});
    json files = json::array();
    for (const EvidenceFile& f : c.files)
        files.push_back({{"path", f.path}, {"role", f.role}, {"source", textOrNull(f.source)}});
    json unattributed =
        c.health.is_object() ? c.health.value("unattributed_events", json::array()) : json::array();
    json doc = {{"schema", "faultline-evidence-case"},
                {"schema_version", kEvidenceCaseSchemaVersion},
                {"case", {{"id", c.caseId}, {"created", c.created}, {"signed_by", textOrNull(c.signedBy)}}},
                {"host", c.host},
                {"software",
                 {{"faultline", c.faultlineVersion},
                  {"driver_version", textOrNull(driver)},
                  {"cuda_version", textOrNull(cuda)},
                  {"trace_attributes", c.traceAttributes}}},
                {"suspect",
                 {{"bus_id", textOrNull(c.suspect.busId)},
                  {"uuid", textOrNull(c.suspect.uuid)},
                  {"serial", textOrNull(c.suspect.serial)},
                  {"product", textOrNull(c.suspect.product)},
                  {"identified_by", c.suspect.source},
                  {"trace_device", textOrNull(c.suspect.traceLabel)}}},
                {"gpus", gpus},
                {"unattributed_events", unattributed.size()},
                {"unattributed_xid_summary", xidSummary(unattributed)},
                {"symptom", c.symptom ? symptomJson(*c.symptom) : json()},
                {"replay", replay},
                {"reproducer", reproducer},
                {"rma_reasons", c.rmaReasons},
                {"other_targets", c.otherTargets},
                {"ruled_out", c.ruledOut},
                {"checklist", checklist},
                {"figures", c.figures},
                {"warnings", c.warnings},
                {"files", files}};
    // Absent, not null, without a ledger: a reader tells "no ledger given" from "nothing in it".
    if (!c.ledgerHistory.is_null()) doc["ledger_history"] = c.ledgerHistory;
    return doc;
}

std::vector<ChecklistItem> evidenceChecklist(const json& caseJson)
{
    std::vector<ChecklistItem> out;
    for (const json& i : caseJson.value("checklist", json::array()))
        out.push_back({jsonString(i, "item"), i.value("present", false), i.value("required", false),
                       jsonString(i, "detail")});
    return out;
}

}  // namespace faultline
