// faultline evidence --out DIR [--campaign RESULTS.h5] [--trace TRACE] [--min-reproducer MIN.h5]
//                    [--logs FILE...]
//                    [--nvidia-smi FILE.xml...] [--attach FILE...] [--case-id ID] [--sign KEY]
//                    [--suspect BUS|UUID|SERIAL] [--inventory DEVICES.json] [--ledger [URL]]
// Builds the RMA evidence bundle DIR and DIR.tar (core/evidence/EvidenceBundle.h).
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "Cli.h"
#include "Commands.h"
#include "LedgerRecording.h"
#include "core/evidence/EvidenceBundle.h"
#include "core/evidence/MinisignKey.h"
#include "core/ledger/LedgerFiles.h"
#include "core/ledger/LedgerHistory.h"

#ifdef FAULTLINE_HAVE_GUI
#include "views/evidence/EvidenceRendering.h"
#endif

namespace faultline::cli {
namespace {

// The password of an encrypted secret key: $FAULTLINE_KEY_PASSWORD, else asked on the terminal.
std::optional<std::string> keyPassword(const std::string& key)
{
    if (const char* env = std::getenv("FAULTLINE_KEY_PASSWORD")) return std::string(env);
    std::FILE* tty = std::fopen("/dev/tty", "r+");
    if (!tty) return std::nullopt;
    std::fprintf(tty, "Password for %s: ", key.c_str());
    std::fflush(tty);
    termios old{};
    const bool canHide = ::tcgetattr(fileno(tty), &old) == 0;
    if (canHide) {
        termios quiet = old;
        quiet.c_lflag &= ~tcflag_t(ECHO);
        ::tcsetattr(fileno(tty), TCSAFLUSH, &quiet);
    }
    char buf[1024] = {};
    const bool got = std::fgets(buf, sizeof buf, tty) != nullptr;
    if (canHide) ::tcsetattr(fileno(tty), TCSAFLUSH, &old);
    std::fprintf(tty, "\n");
    std::fclose(tty);
    if (!got) return std::nullopt;
    std::string pw = buf;
    while (!pw.empty() && (pw.back() == '\n' || pw.back() == '\r')) pw.pop_back();
    return pw;
}

}  // namespace

CommandRunner addEvidenceCommand(CLI::App& app)
{
    auto o = std::make_shared<EvidenceOptions>();
    CLI::App* cmd = app.add_subcommand(
        "evidence",
        "Build a signed, self-checking RMA evidence bundle (DIR and DIR.tar): vendor files, health, "
        "decoded Xid events, the campaign, a minimal reproducer, case.json, report");
    cmd->add_option("--out", o->outDir, "bundle directory to create (DIR.tar is written beside it)")
        ->required();
    cmd->add_option("--campaign", o->campaign, "replay campaign results (faultline replay --out RESULTS.h5)");
    cmd->add_option("--trace", o->trace, "the campaign's trace (default: the one the campaign names)");
    cmd->add_option("--min-reproducer", o->minReproducer,
                    "a minimal reproducer of the suspect's divergent op (faultline shrink --out MIN.h5): the "
                    "bundle's reproducer replays it");
    cmd->add_option("--logs", o->logs,
                    "kernel logs: dmesg, journalctl -k (text or -o json), nvidia-bug-report.log[.gz]");
    cmd->add_option("--nvidia-smi", o->nvidiaSmi,
                    "nvidia-smi -q -x snapshots in the order taken (the first: before the reset)");
    cmd->add_option("--attach", o->attachments,
                    "further vendor files, kept byte-identical: field diagnostic, DCGM");
    cmd->add_option("--case-id", o->caseId, "case identifier (default: FL-<date>-<serial>)");
    cmd->add_option("--sign", o->signKey,
                    "minisign secret key (faultline keygen KEY) to sign the manifest with");
    cmd->add_option("--suspect", o->suspect,
                    "the suspect GPU's bus id, UUID or serial (default: the trace's suspect device, else the "
                    "health report's)");
    cmd->add_option("--inventory", o->inventory,
                    "the node's GPU inventory (faultline devices --json), to tie cuda:N targets to GPUs "
                    "where the campaign recorded none (replay --inventory)");
    auto ledger = std::make_shared<LedgerRequest>();
    addLedgerOption(cmd, *ledger);
    return [o, ledger] {
        o->faultlineVersion = FAULTLINE_VERSION;
        // With --ledger the bundle carries the suspect's history (case.json `ledger_history`),
        // read before this bundle is recorded into the same ledger.
        std::optional<Ledger> open;
        if (ledger->requested()) {
            auto l = Ledger::open(ledger->url);
            if (!l) return failWith(l.error());
            open.emplace(std::move(*l));
            o->deviceHistory = [&open](const SuspectGpu& s) {
                return ledgerDeviceHistory(open->engine(), s.serial, s.uuid);
            };
        }
        if (!o->signKey.empty() && isEncryptedMinisignSecretKey(o->signKey))
            o->keyPassword = keyPassword(o->signKey);
#ifdef FAULTLINE_HAVE_GUI
        views::attachEvidenceRendering(*o);  // figures and report.pdf
#endif
        auto r = buildEvidenceBundle(*o);
        o->deviceHistory = nullptr;  // it refers to `open`
        if (!r) {
            std::cerr << "error: " << r.message() << "\n";
            return kExitError;
        }
        for (const std::string& w : r->warnings) std::cerr << "warning: " << w << "\n";
        std::cout << "evidence bundle: " << r->dir << " (" << r->files << " files) and " << r->tar << "\n"
                  << "case " << r->caseJson["case"].value("id", "") << ", suspect "
                  << r->caseJson["suspect"].value("serial", nlohmann::json("?")).dump() << "\n";
        if (const auto h = r->caseJson.find("ledger_history"); h != r->caseJson.end())
            std::cout << "device history from the ledger: "
                      << (h->value("found", false)
                              ? std::to_string(h->value("campaigns", nlohmann::json::array()).size()) +
                                    " campaign(s), " +
                                    std::to_string(h->value("rules", nlohmann::json::array()).size()) +
                                    " rule(s) fired"
                              : std::string("none for the suspect"))
                      << "\n";
        if (!r->keyId.empty()) std::cout << "signed with key " << r->keyId << "\n";
        std::cout << "check it: faultline verify " << r->tar << (r->keyId.empty() ? "" : " --pubkey KEY.pub")
                  << "   (or: sha256sum -c MANIFEST.sha256"
                  << (r->keyId.empty() ? "" : "; minisign -V -p KEY.pub -m MANIFEST.sha256") << " in "
                  << r->dir << ")\n";
        if (!open) return kExitOk;
        // The bundle as `ledger add DIR` reads it: verified, its case and manifest digest.
        return recordInOpenLedger(*open, [&](Ledger& l) -> Result<LedgerAdded> {
            auto added = addLedgerFile(l, r->dir, ledgerHostName());
            if (!added) return added.error();
            return added->added;
        });
    };
}

}  // namespace faultline::cli
