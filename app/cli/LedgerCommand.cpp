// faultline ledger add|show|query: the ledger of every GPU (core/ledger, docs/ledger.md).
//   add FILE...        health JSON, kernel logs, campaign and fleet results (files or JSON) and
//                      evidence bundles, each told by its content and added in one transaction;
//                      the first file that is none of these stops with exit 2 naming it
//   show SERIAL|UUID [--window week|month]
//                      the GPU's timeline, its trends and what the rules conclude
//   query [--flag F] [--xid N] [--verdict V] [--host H] [--since T] [--until T]
// Every subcommand takes --ledger PATH_OR_URL (default: the user's data directory) and --json.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "Cli.h"
#include "Commands.h"
#include "LedgerRecording.h"
#include "core/Text.h"
#include "core/ledger/LedgerFiles.h"
#include "core/ledger/LedgerQuery.h"
#include "core/ledger/LedgerTimeline.h"

namespace faultline::cli {
namespace {

struct LedgerOptions {
    std::string ledger, host, key, window = "month";
    std::vector<std::string> files;
    bool json = false;
    std::string flag, verdict, queryHost, since, until;
    std::optional<int64_t> xid;
    size_t limit = 1000;
};

int runAdd(const LedgerOptions& o)
{
    auto ledger = Ledger::open(o.ledger);
    if (!ledger) return failWith(ledger.error());
    const std::string host = o.host.empty() ? ledgerHostName() : o.host;
    nlohmann::json files = nlohmann::json::array();
    LedgerAdded total;
    for (const std::string& f : o.files) {
        auto added = addLedgerFile(*ledger, f, host);
        if (!added) {
            if (!files.empty())
                std::cerr << "note: the " << files.size() << " file(s) before it were added to "
                          << printableText(ledger->location()) << "\n";
            return failWith(added.error());
        }
        total.add(added->added);
        nlohmann::json j = {{"file", f}, {"kind", added->kind}};
        j.update(added->added.toJson());
        files.push_back(std::move(j));
        if (!o.json) {
            const LedgerAdded& a = added->added;
            std::cout << printableText(f) << ": " << added->kind << ", " << a.total()
                      << " row(s) added (identities " << a.identities << ", snapshots " << a.snapshots
                      << ", events " << a.events << ", boots " << a.boots << ", campaigns " << a.campaigns
                      << ", targets " << a.targets << ", fleet merges " << a.fleetMerges << ", bundles "
                      << a.bundles << "), " << a.repeated << " already there\n";
        }
    }
    if (o.json) {
        nlohmann::json doc = {{"format", "faultline-ledger-add"},
                              {"version", 1},
                              {"ledger", ledger->location()},
                              {"host", host},
                              {"files", files},
                              {"total", total.toJson()}};
        std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
        std::cout << "ledger " << printableText(ledger->location()) << ": " << total.total()
                  << " row(s) added, " << total.repeated << " already there\n";
    }
    return kExitOk;
}

int runShow(const LedgerOptions& o)
{
    auto ledger = Ledger::openExisting(o.ledger);
    if (!ledger) return failWith(ledger.error());
    const auto window = parseTrendWindow(o.window);  // CLI::IsMember admits only these words
    auto timeline = ledgerTimeline(ledger->engine(), o.key, window.value_or(TrendWindow::Month));
    if (!timeline) return failWith(timeline.error());
    if (o.json)
        std::cout << ledgerTimelineJson(*timeline).dump(2, ' ', false,
                                                        nlohmann::json::error_handler_t::replace)
                  << "\n";
    else
        std::cout << ledgerTimelineText(*timeline);
    return kExitOk;
}

int runQuery(const LedgerOptions& o)
{
    LedgerQueryFilter f;
    if (!o.flag.empty()) f.flag = o.flag;
    f.xid = o.xid;
    if (!o.verdict.empty()) {
        f.verdict = parseVerdict(o.verdict);  // the edge: the word becomes the enum here
        if (!f.verdict)
            return failWith(
                Error{"--verdict " + o.verdict +
                          ": not a verdict (healthy, transient, persistent, device-specific, none)",
                      ErrorCode::Usage});
    }
    if (!o.queryHost.empty()) f.host = o.queryHost;
    if (!o.since.empty()) f.since = o.since;
    if (!o.until.empty()) f.until = o.until;
    f.limit = o.limit;
    auto ledger = Ledger::openExisting(o.ledger);
    if (!ledger) return failWith(ledger.error());
    auto result = queryLedger(ledger->engine(), f);
    if (!result) return failWith(result.error());
    if (o.json)
        std::cout << ledgerQueryJson(f, *result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
    else
        std::cout << ledgerQueryText(*result);
    return kExitOk;
}

void addCommonOptions(CLI::App* cmd, LedgerOptions& o)
{
    cmd->add_option("--ledger", o.ledger,
                    "The ledger: a path, sqlite:///abs/path or postgresql://... (default "
                    "$XDG_DATA_HOME/faultline/ledger.sqlite)");
    cmd->add_flag("--json", o.json, "One JSON document (docs/formats.md)");
}

}  // namespace

CommandRunner addLedgerCommand(CLI::App& app)
{
    auto o = std::make_shared<LedgerOptions>();
    CLI::App* cmd = app.add_subcommand(
        "ledger", "The ledger of every GPU: health, events, campaigns and verdicts by board serial and UUID");
    cmd->require_subcommand(1);
    CLI::App* add = cmd->add_subcommand(
        "add", "Add health JSON, kernel logs, campaign/fleet results and evidence bundles (told by content)");
    add->add_option("FILE", o->files, "Files (or bundle directories) to add")->required()->expected(1, -1);
    add->add_option(
        "--host", o->host,
        "The host health JSON and kernel logs were taken on (default: this one, as replay names it)");
    addCommonOptions(add, *o);
    CLI::App* show =
        cmd->add_subcommand("show", "A GPU's timeline, and what the rules conclude, with reasons");
    show->add_option("KEY", o->key, "Board serial or GPU UUID")->required();
    show->add_option("--window", o->window, "Trends' failure rate per week or month (default month)")
        ->check(CLI::IsMember({"week", "month"}));
    addCommonOptions(show, *o);
    CLI::App* query = cmd->add_subcommand("query", "Rows by health flag, Xid, verdict, host and time range");
    query->add_option("--flag", o->flag, "Health flag: " + joinText(ledgerFlagNames()));
    query->add_option("--xid", o->xid, "Xid (or SXid) number")
        ->check(CLI::Range(int64_t(0), int64_t(9'999'999)));
    query->add_option("--verdict", o->verdict,
                      "Campaign verdict: healthy, transient, persistent, device-specific, none");
    query->add_option("--host", o->queryHost, "Host");
    query->add_option("--since", o->since, "From this UTC ISO 8601 date or time (inclusive)");
    query->add_option("--until", o->until, "Up to this UTC ISO 8601 date or time (exclusive)");
    query->add_option("--limit", o->limit, "At most this many rows of each kind (default 1000)")
        ->check(CLI::Range(size_t(1), size_t(10'000'000)));
    addCommonOptions(query, *o);
    return [o, add, show, query] {
        if (add->parsed()) return runAdd(*o);
        if (show->parsed()) return runShow(*o);
        if (query->parsed()) return runQuery(*o);
        return kExitError;
    };
}

}  // namespace faultline::cli
