#include "EvidenceBundle.h"
#include "../JsonFields.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "../Text.h"
#include "../devices/DeviceReport.h"
#include "../health/BusId.h"
#include "../health/HealthReport.h"
#include "../io/SafeFiles.h"
#include "../replay/Bisect.h"
#include "../trace/Trace.h"
#include "BundleSealer.h"
#include "CampaignEvidence.h"
#include "EvidenceCase.h"
#include "EvidenceReport.h"
#include "Manifest.h"
#include "MinimalReproducer.h"
#include "MinisignKey.h"
#include "SuspectTargets.h"

namespace faultline {
namespace fs = std::filesystem;
namespace {

bool isBugReport(const std::string& path)
{
    return lowerAscii(fs::path(path).filename().string()).find("nvidia-bug-report") != std::string::npos;
}

// The bundle's copies of the inputs: byte-identical, under unique safe names.
class FileCopier {
public:
    explicit FileCopier(fs::path root) : m_root(std::move(root)) {}
    Result<std::string> copy(const std::string& source, const std::string& folder)
    {
        std::string name = bundleSafeName(fs::path(source).filename().string());
        std::string rel = folder + "/" + name;
        for (int i = 2; m_used.count(rel); ++i) rel = folder + "/" + std::to_string(i) + "-" + name;
        m_used.insert(rel);
        std::error_code ec;
        fs::create_directories(m_root / folder, ec);
        if (ec) return fileError((m_root / folder).string(), ec.message());
        if (!fs::copy_file(source, m_root / rel, fs::copy_options::none, ec) || ec)
            return fileError(source, "cannot copy into the bundle: " + ec.message());
        return rel;
    }

private:
    fs::path m_root;
    std::set<std::string> m_used;
};

// Removes the half-built bundle unless dismissed.
class OutputGuard {
public:
    explicit OutputGuard(fs::path dir) : m_dir(std::move(dir)) {}
    ~OutputGuard()
    {
        if (m_armed) {
            std::error_code ec;
            fs::remove_all(m_dir, ec);
        }
    }
    void dismiss() { m_armed = false; }

private:
    fs::path m_dir;
    bool m_armed = true;
};

// An input must be a regular file (a FIFO would block the export, a device never end it).
Status checkInput(const std::string& path, const char* what)
{
    if (Status st = checkRegularInput(path); !st) return Error{st.message() + " (" + what + ")", st.code()};
    return {};
}

// Whether anything is at `path`, a link (even a dangling one) included.
// Every input file with the option that gave it, to refuse an output that is one of them.
std::vector<std::pair<std::string, std::string>> inputFiles(const EvidenceOptions& o)
{
    std::vector<std::pair<std::string, std::string>> in;
    for (const std::string& f : o.logs) in.emplace_back("--logs", f);
    for (const std::string& f : o.nvidiaSmi) in.emplace_back("--nvidia-smi", f);
    for (const std::string& f : o.attachments) in.emplace_back("--attach", f);
    if (!o.campaign.empty()) {
        in.emplace_back("--campaign", o.campaign);
        in.emplace_back("--campaign (its journal)", o.campaign + ".journal.jsonl");
    }
    if (!o.trace.empty()) in.emplace_back("--trace", o.trace);
    if (!o.inventory.empty()) in.emplace_back("--inventory", o.inventory);
    if (!o.signKey.empty()) in.emplace_back("--sign", o.signKey);
    return in;
}

// DIR and DIR.tar are new: neither an input nor anything that exists (a link included).
Status checkOutputs(const EvidenceOptions& o, const std::string& dir, const std::string& tar)
{
    for (const auto& [what, input] : inputFiles(o))
        for (const std::string& out : {dir, tar})
            if (sameFile(out, input))
                return fileError(out, "is the input given as " + what + " (refusing to write over an input)",
                                 ErrorCode::Usage);
    for (const std::string& out : {dir, tar})
        if (pathOccupied(out))
            return fileError(out, "already exists (refusing to overwrite it)", ErrorCode::Usage);
    return {};
}

std::string resolveTrace(const EvidenceOptions& o, const CampaignEvidence* campaign)
{
    if (!o.trace.empty()) return o.trace;
    if (!campaign || campaign->trace.empty()) return {};
    std::error_code ec;
    if (fs::exists(campaign->trace, ec)) return campaign->trace;
    const fs::path beside = fs::path(o.campaign).parent_path() / fs::path(campaign->trace).filename();
    return fs::exists(beside, ec) ? beside.string() : std::string();
}

// The suspect: --suspect, else the trace's suspect device, else the one GPU the health report
// recommends the most for.
SuspectGpu findSuspect(const EvidenceOptions& o, const nlohmann::json& health, const Trace* trace)
{
    SuspectGpu s;
    const nlohmann::json gpus =
        health.is_object() && health.contains("gpus") ? health["gpus"] : nlohmann::json::array();
    auto matches = [](const nlohmann::json& g, const std::string& key) {
        if (key.empty()) return false;
        const std::string bus = normalizeBusId(key);
        return (!bus.empty() && jsonString(g, "bus_id") == bus) ||
               lowerAscii(jsonString(g, "uuid")) == lowerAscii(key) || jsonString(g, "serial") == key;
    };
    auto adopt = [&](const nlohmann::json& g) {
        s.health = g;
        if (s.busId.empty()) s.busId = jsonString(g, "bus_id");
        if (s.uuid.empty()) s.uuid = jsonString(g, "uuid");
        if (s.serial.empty()) s.serial = jsonString(g, "serial");
        if (!jsonString(g, "product").empty())
            s.product = jsonString(g, "product");  // the board, not the trace's label
    };
    if (!o.suspect.empty()) {
        s.source = "--suspect " + o.suspect;
        for (const nlohmann::json& g : gpus)
            if (matches(g, o.suspect)) adopt(g);
        if (s.health.is_null()) {
            const std::string bus = normalizeBusId(o.suspect);
            if (!bus.empty())
                s.busId = bus;
            else if (lowerAscii(o.suspect).rfind("gpu-", 0) == 0)
                s.uuid = o.suspect;
            else
                s.serial = o.suspect;
        }
    }
    if (trace && s.source.empty())
        for (const TraceDevice& d : trace->devices)
            if (d.role == "suspect") {
                s.source = "the trace's suspect device '" + d.label + "'";
                s.traceLabel = d.label;
                s.busId = normalizeBusId(d.pciBusId);
                s.uuid = d.uuid;
                s.serial = d.serial;
                s.product = d.name;
                for (const nlohmann::json& g : gpus)
                    if (matches(g, d.uuid) || matches(g, d.serial) || matches(g, d.pciBusId)) {
                        adopt(g);
                        break;
                    }
                break;
            }
    if (trace && s.traceLabel.empty())
        for (const TraceDevice& d : trace->devices)
            if (d.role == "suspect") s.traceLabel = d.label;
    if (s.source.empty()) {
        static const std::map<std::string, int> rank = {
            {"none", 0}, {"monitor", 1}, {"reset", 2}, {"drain", 3}, {"rma_candidate", 4}};
        const nlohmann::json* best = nullptr;
        int bestRank = 0;
        bool tie = false;
        for (const nlohmann::json& g : gpus) {
            auto it = rank.find(jsonString(g, "recommendation"));
            const int r = it == rank.end() ? 0 : it->second;
            if (r > bestRank)
                best = &g, bestRank = r, tie = false;
            else if (r == bestRank && r > 0)
                tie = true;
        }
        if (best && !tie) {
            s.source = "the health report (the only GPU recommended for " +
                       jsonString(*best, "recommendation") + ")";
            adopt(*best);
        } else if (gpus.size() == 1) {
            s.source = "the health report (its only GPU)";
            adopt(gpus[0]);
        }
    }
    return s;
}

// Fills the suspect's missing UUID, serial or bus id from what records the same GPU (the trace's
// devices, the node's inventory), so that its health entry and its targets are found however it
// was named (a UUID on the command line, a bus id in the kernel log).
void completeSuspect(SuspectGpu& s, const nlohmann::json& health, const Trace* trace,
                     const CampaignEvidence* campaign, const nlohmann::json& inventory)
{
    std::vector<BoardIdentity> known;
    if (trace)
        for (const TraceDevice& d : trace->devices) known.push_back({d.uuid, d.serial, d.pciBusId});
    nlohmann::json inv = inventory;
    if (inv.is_null() && campaign && campaign->document.is_object() && campaign->document.contains("node") &&
        campaign->document["node"].is_object())
        inv = campaign->document["node"].value("inventory", nlohmann::json());
    if (inv.is_object() && inv.contains("gpus") && inv["gpus"].is_array())
        for (const nlohmann::json& g : inv["gpus"])
            if (g.is_object())
                known.push_back(
                    {jsonString(g, "uuid"), jsonString(g, "serial"), jsonString(g, "pci_bus_id")});
    for (const BoardIdentity& k : known) {
        if (!BoardIdentity{s.uuid, s.serial, s.busId}.sameGpu(k)) continue;
        if (s.uuid.empty()) s.uuid = k.uuid;
        if (s.serial.empty()) s.serial = k.serial;
        if (s.busId.empty()) s.busId = normalizeBusId(k.busId);
    }
    // The trace's device for the suspect's recorded outputs: the one that is the same GPU (a
    // device that records no identity at all keeps its role's word).
    if (trace && !s.traceLabel.empty())
        for (const TraceDevice& d : trace->devices) {
            const BoardIdentity id{d.uuid, d.serial, d.pciBusId};
            if (d.label == s.traceLabel && !id.empty() && !id.sameGpu({s.uuid, s.serial, s.busId}))
                s.traceLabel.clear();
        }
    if (trace && s.traceLabel.empty())
        for (const TraceDevice& d : trace->devices)
            if (BoardIdentity{d.uuid, d.serial, d.pciBusId}.sameGpu({s.uuid, s.serial, s.busId})) {
                s.traceLabel = d.label;
                break;
            }
    if (s.health.is_null() && health.is_object())
        for (const nlohmann::json& g : health.value("gpus", nlohmann::json::array()))
            if (BoardIdentity{s.uuid, s.serial, s.busId}.sameGpu(
                    {jsonString(g, "uuid"), jsonString(g, "serial"), jsonString(g, "bus_id")})) {
                s.health = g;
                if (s.product.empty()) s.product = jsonString(g, "product");
                break;
            }
}

nlohmann::json hostJson()
{
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    utsname u{};
    ::uname(&u);
    return {{"hostname", host}, {"os", u.sysname}, {"kernel", u.release}, {"machine", u.machine}};
}

std::string utcNow()
{
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string defaultCaseId(const SuspectGpu& s)
{
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char date[16];
    std::strftime(date, sizeof date, "%Y%m%d", &tm);
    const std::string who = !s.serial.empty() ? s.serial : !s.uuid.empty() ? s.uuid.substr(0, 12) : s.busId;
    return "FL-" + std::string(date) + "-" + bundleSafeName(who);
}

Status writeText(const fs::path& path, const std::string& text)
{
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    return writeNewTextFile(path.string(), text);
}

// What the options ask for, checked before anything is read: every input exists and is a file,
// the outputs are new, and there is something to export.
Status checkRequest(const EvidenceOptions& o, const fs::path& root, const std::string& tarPath)
{
    if (Status st = checkOutputs(o, root.string(), tarPath); !st) return st;
    if (!isBundlePath(root.filename().string()))
        return fileError(root.string(), "the bundle folder's name must be made of [A-Za-z0-9._+-]");
    if (!o.minReproducer.empty() && o.campaign.empty())
        return Error{
            "evidence: --min-reproducer needs --campaign: it reproduces an op the campaign found failing",
            ErrorCode::Usage};
    if (o.campaign.empty() && o.logs.empty() && o.nvidiaSmi.empty())
        return Error{"evidence: nothing to export: give --campaign, --logs or --nvidia-smi",
                     ErrorCode::Usage};
    for (const std::string& f : o.logs)
        if (Status st = checkInput(f, "--logs"); !st) return st;
    for (const std::string& f : o.nvidiaSmi)
        if (Status st = checkInput(f, "--nvidia-smi"); !st) return st;
    for (const std::string& f : o.attachments)
        if (Status st = checkInput(f, "--attach"); !st) return st;
    if (!o.campaign.empty())
        if (Status st = checkInput(o.campaign, "--campaign"); !st) return st;
    if (!o.minReproducer.empty())
        if (Status st = checkInput(o.minReproducer, "--min-reproducer"); !st) return st;
    if (!o.inventory.empty())
        if (Status st = checkInput(o.inventory, "--inventory"); !st) return st;
    return {};
}

// Everything the bundle is made from, read before anything is written.
struct Gathered {
    nlohmann::json inventory;
    std::optional<MinisignSecretKey> key;
    nlohmann::json health;
    std::optional<CampaignEvidence> campaign;
    std::string tracePath;
    std::optional<Trace> trace;
    SuspectGpu suspect;
    SuspectTargets ties;
    nlohmann::json ledgerHistory;
    std::vector<std::string> warnings;
};

Status gatherInputs(const EvidenceOptions& o, Gathered& g)
{
    if (!o.inventory.empty()) {
        auto inv = readInventoryJson(o.inventory);
        if (!inv) return inv.error();
        g.inventory = *inv;
    }
    if (!o.signKey.empty()) {
        auto k = readMinisignSecretKey(o.signKey, o.keyPassword ? &*o.keyPassword : nullptr);
        if (!k) return k.error();
        g.key = *k;
    }
    if (!o.logs.empty() || !o.nvidiaSmi.empty()) {
        HealthInputs in;
        in.logFiles = o.logs;
        in.nvidiaSmiFiles = o.nvidiaSmi;
        auto report = collectHealth(in);
        if (!report) return report.error();
        g.health = healthReportJson(*report);
        for (const std::string& w : report->warnings) g.warnings.push_back("health: " + w);
    }
    if (!o.campaign.empty()) {
        auto c = readCampaignEvidence(o.campaign);
        if (!c) return c.error();
        g.campaign = std::move(*c);
    }
    const CampaignEvidence* campaign = g.campaign ? &*g.campaign : nullptr;
    g.tracePath = resolveTrace(o, campaign);
    if (!g.tracePath.empty()) {
        if (Status st = checkInput(g.tracePath, o.trace.empty() ? "the campaign's trace" : "--trace"); !st)
            return st;
        auto t = readTrace(g.tracePath);
        if (!t) return t.error();
        g.trace = std::move(*t);
    } else if (campaign) {
        g.warnings.push_back("no reproducer: the campaign's trace '" + printableText(campaign->trace) +
                             "' was not found (give --trace)");
    }
    const Trace* trace = g.trace ? &*g.trace : nullptr;
    g.suspect = findSuspect(o, g.health, trace);
    if (g.suspect.busId.empty() && g.suspect.uuid.empty() && g.suspect.serial.empty())
        return Error{
            "evidence: refusing to export: no serial, UUID or bus id for the suspect GPU (give --nvidia-smi "
            "or --logs that name it, a trace whose suspect device records it, or --suspect)",
            ErrorCode::Usage};
    completeSuspect(g.suspect, g.health, trace, campaign, g.inventory);
    // The suspect's history, taken before anything is written (and so before this bundle is
    // recorded anywhere: it never cites itself).
    if (o.deviceHistory) {
        auto history = o.deviceHistory(g.suspect);
        if (!history) return history.error();
        g.ledgerHistory = std::move(*history);
    }
    if (campaign) {
        g.ties = tieTargetsToSuspect(*campaign, {g.suspect.uuid, g.suspect.serial, g.suspect.busId},
                                     g.inventory, trace ? trace->devices : std::vector<TraceDevice>{});
        for (const std::string& w : g.ties.warnings) g.warnings.push_back(w);
    }
    return {};
}

// DIR itself is made here, new (mkdir neither follows a link nor takes an existing folder).
Status makeBundleDir(const fs::path& root)
{
    std::error_code ec;
    if (root.has_parent_path()) {
        fs::create_directories(root.parent_path(), ec);
        if (ec)
            return fileError(root.parent_path().string(), "cannot create: " + ec.message(), ErrorCode::Io);
    }
    if (::mkdir(root.c_str(), 0755) != 0) {
        const int e = errno;
        if (e == EEXIST)
            return fileError(root.string(), "already exists (refusing to overwrite it)", ErrorCode::Usage);
        return fileError(root.string(), std::string("cannot create: ") + std::strerror(e), ErrorCode::Io);
    }
    return {};
}

// The logs, attachments and nvidia-smi snapshots as given, and the health report decoded from them.
Status addHealthFiles(const EvidenceOptions& o, const fs::path& root, FileCopier& copier, EvidenceCase& c)
{
    for (const std::string& f : o.logs) {
        auto rel = copier.copy(f, isBugReport(f) ? "vendor" : "logs");
        if (!rel) return rel.error();
        c.files.push_back({*rel, isBugReport(f) ? "bug_report" : "kernel_log", f});
    }
    for (const std::string& f : o.attachments) {
        auto rel = copier.copy(f, "vendor");
        if (!rel) return rel.error();
        c.files.push_back({*rel, isBugReport(f) ? "bug_report" : "attachment", f});
    }
    for (const std::string& f : o.nvidiaSmi) {
        auto rel = copier.copy(f, "health/nvidia-smi");
        if (!rel) return rel.error();
        c.files.push_back({*rel, "nvidia_smi_snapshot", f});
    }
    if (c.health.is_null()) return {};
    if (Status st = writeText(root / "health/health.json", c.health.dump(2) + "\n"); !st) return st;
    c.files.push_back({"health/health.json", "health_report", ""});
    std::string lines;
    for (const nlohmann::json& g : c.health.value("gpus", nlohmann::json::array()))
        for (const nlohmann::json& e : g.value("events", nlohmann::json::array())) lines += e.dump() + "\n";
    for (const nlohmann::json& e : c.health.value("unattributed_events", nlohmann::json::array()))
        lines += e.dump() + "\n";
    if (Status st = writeText(root / "health/events.jsonl", lines); !st) return st;
    c.files.push_back({"health/events.jsonl", "decoded_events", ""});
    return {};
}

// The symptom: the first divergent op against the golden model on its own inputs. A shrunk
// reproducer holds no recorded outputs: the symptom comes from the incident's own op, written aside
// for the bisection and removed.
Status findSymptom(const Trace& trace, const ReproducerFiles& r, const fs::path& root, EvidenceCase& c)
{
    std::error_code ec;
    const fs::path symptomTrace =
        r.shrunkFrom.empty() ? fs::path(r.trace) : root / "reproducer" / ".symptom-ops.h5";
    if (!r.shrunkFrom.empty())
        if (Status st = writeTraceSubset(trace, {r.ops.begin(), r.ops.end()}, symptomTrace.string()); !st)
            return st;
    auto small = readTrace(symptomTrace.string());
    if (small && !c.suspect.traceLabel.empty()) {
        auto b = bisectTrace(*small, c.suspect.traceLabel);
        if (b && b->firstDivergentOp)
            for (const BisectOp& op : b->ops)
                if (op.index == *b->firstDivergentOp && op.divergence)
                    c.symptom =
                        EvidenceFigureInput{op.index, op.op, op.name, c.suspect.traceLabel, *op.divergence};
    }
    if (!r.shrunkFrom.empty()) fs::remove(symptomTrace, ec);
    return {};
}

// The campaign's results, journal and report, and the reproducer of the suspect's own divergent
// ops (other targets are context).
Status addCampaign(const EvidenceOptions& o, const Gathered& g, const fs::path& root, FileCopier& copier,
                   EvidenceCase& c)
{
    std::error_code ec;
    auto rel = copier.copy(o.campaign, "replay");
    if (!rel) return rel.error();
    c.files.push_back({*rel, "campaign_results", o.campaign});
    const std::string journal = o.campaign + ".journal.jsonl";
    if (fs::is_regular_file(journal, ec)) {
        auto j = copier.copy(journal, "replay");
        if (!j) return j.error();
        c.files.push_back({*j, "campaign_journal", journal});
    }
    if (Status st = writeText(root / "replay/campaign.json", g.campaign->document.dump(2) + "\n"); !st)
        return st;
    c.files.push_back({"replay/campaign.json", "campaign_report", ""});
    const bool reproducible = !suspectDivergentOps(*g.campaign, g.ties).empty() && g.trace;
    if (!reproducible && !o.minReproducer.empty())
        return fileError(o.minReproducer,
                         g.trace ? "has nothing to reproduce: the suspect GPU failed no op in the campaign"
                                 : "cannot be used without the campaign's trace (give --trace)",
                         ErrorCode::Usage);
    if (!reproducible) return {};
    fs::create_directories(root / "reproducer", ec);
    auto r = writeMinimalReproducer(*g.campaign, g.tracePath, (root / "reproducer").string(), g.ties,
                                    o.minReproducer);
    if (!r) return r.error();
    c.reproducer = *r;
    if (!r->replayable)
        c.warnings.push_back(
            "reproducer: reproduce.sh cannot replay the campaign automatically (it exits 2 saying why): " +
            printableText(r->notReplayable));
    c.files.push_back({"reproducer/trace.h5", "reproducer_trace", ""});
    c.files.push_back({"reproducer/reproduce.sh", "reproducer_script", ""});
    return findSymptom(*g.trace, *r, root, c);
}

// The symptom's figures, report.md (and report.pdf where the GUI draws it) and case.json.
Result<nlohmann::json> writeReports(const EvidenceOptions& o, const fs::path& root, EvidenceCase& c)
{
    std::error_code ec;
    if (c.symptom && o.renderFigures) {
        auto figs = o.renderFigures(root.string(), *c.symptom);
        if (figs) {
            for (const std::string& f : *figs) c.files.push_back({f, "figure", ""});
            c.figures = *figs;
        } else {
            c.warnings.push_back("figures: " + figs.message());
        }
    }
    if (!o.renderPdf && o.trialWithoutPdf)
        c.warnings.push_back(
            "trial bundle: report.pdf is left out here and drawn when the bundle is exported");
    else if (!o.renderPdf)
        c.warnings.push_back(
            "no report.pdf or figures: this faultline was built without the GUI (report.md only)");
    c.finish();
    c.files.push_back({"case.json", "case", ""});
    c.files.push_back({"report.md", "report", ""});
    if (o.renderPdf) c.files.push_back({"report.pdf", "report", ""});
    nlohmann::json caseJson = evidenceCaseJson(c);
    if (Status st = writeText(root / "report.md", evidenceReportMarkdown(caseJson)); !st) return st.error();
    if (o.renderPdf) {
        if (Status st = o.renderPdf((root / "report.md").string(), (root / "report.pdf").string()); !st) {
            c.files.pop_back();
            c.warnings.push_back("no report.pdf: " + st.message());
            caseJson = evidenceCaseJson(c);
            fs::remove(root / "report.md", ec);
            if (Status again = writeText(root / "report.md", evidenceReportMarkdown(caseJson)); !again)
                return again.error();
        }
    }
    if (Status st = writeText(root / "case.json", caseJson.dump(2) + "\n"); !st) return st.error();
    return caseJson;
}

Result<EvidenceResult> buildBundle(const EvidenceOptions& o)
{
    if (o.outDir.empty()) return Error{"evidence: --out DIR is required", ErrorCode::Usage};
    const fs::path dir = fs::path(o.outDir).lexically_normal();
    const fs::path root = dir.has_filename() ? dir : dir.parent_path();
    if (Status st = checkRequest(o, root, root.string() + ".tar"); !st) return st.error();
    Gathered g;
    if (Status st = gatherInputs(o, g); !st) return st.error();
    if (Status st = makeBundleDir(root); !st) return st.error();

    OutputGuard guard(root);
    FileCopier copier(root);
    EvidenceCase c;
    c.caseId = o.caseId.empty() ? defaultCaseId(g.suspect) : o.caseId;
    c.created = utcNow();
    c.host = hostJson();
    c.faultlineVersion = o.faultlineVersion;
    c.suspect = g.suspect;
    c.health = g.health;
    c.campaign = g.campaign ? &*g.campaign : nullptr;
    c.targets = g.ties;
    c.ledgerHistory = g.ledgerHistory;
    if (g.trace) c.traceAttributes = g.trace->attributes;
    c.warnings = g.warnings;
    c.signedBy = g.key ? g.key->publicPart().keyIdText() : std::string();
    if (Status st = addHealthFiles(o, root, copier, c); !st) return st.error();
    if (g.campaign)
        if (Status st = addCampaign(o, g, root, copier, c); !st) return st.error();
    auto caseJson = writeReports(o, root, c);
    if (!caseJson) return caseJson.error();

    SealOptions seal;
    seal.key = g.key ? &*g.key : nullptr;
    seal.trustedComment =
        "faultline evidence case " + bundleSafeName(c.caseId) + "\tfile:MANIFEST.sha256\thashed";
    auto sealed = sealBundle(root.string(), seal);
    if (!sealed) return sealed.error();
    guard.dismiss();
    EvidenceResult result;
    result.dir = root.string();
    result.tar = sealed->tarPath;
    result.caseJson = *caseJson;
    result.warnings = c.warnings;
    result.files = sealed->files;
    result.keyId = sealed->keyId;
    return result;
}

}  // namespace

Result<EvidenceResult> buildEvidenceBundle(const EvidenceOptions& options)
{
    // Inputs are untrusted: an unexpected shape of a document is an error, never a crash (the
    // half-built bundle is removed while unwinding).
    try {
        return buildBundle(options);
    } catch (const std::exception& e) {
        return Error{"evidence: " + options.outDir + ": " + e.what(), ErrorCode::Io};
    }
}

}  // namespace faultline
