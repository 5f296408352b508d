#pragma once
// Shared by the ledger tests: ledgers in temporary directories and the documents added to them
// (a health document, a campaign report with its node inventory), built small and by hand so each
// test says what it plants.
#include <QTemporaryDir>

#include <nlohmann/json.hpp>
#include <string>

#include "core/ledger/Ledger.h"

namespace faultline::test {

// A campaign report (the `replay --json` fields the ledger reads) of one target `cuda:0` on the
// GPU `serial`/`uuid` of host `host`, with `failures` failed runs of `runs` on op 0.
inline nlohmann::json campaignReport(const std::string& host, const std::string& serial,
                                     const std::string& uuid, const std::string& verdict, int failures,
                                     int runs = 100, const std::string& trace = "incident.h5")
{
    const double rate = runs ? double(failures) / runs : 0.0;
    return {
        {"trace", trace},
        {"trace_digest", "digest-of-" + trace},
        {"reps", runs},
        {"seed", 7},
        {"node",
         {{"host", host},
          {"inventory",
           {{"gpus",
             {{{"index", 0},
               {"uuid", uuid},
               {"serial", serial},
               {"pci_bus_id", "0000:3b:00.0"},
               {"name", "NVIDIA H100"}}}}}}}},
        {"targets",
         {{{"target", "cuda:0"},
           {"verdict", verdict},
           {"runs", runs},
           {"failures", failures},
           {"rate", rate},
           {"ci", {0.0, rate + 0.05}},
           {"explanation", "planted"}}}},
        {"ops",
         {{{"index", 0},
           {"op", "gemm"},
           {"name", "layer0.mlp"},
           {"targets",
            {{"cuda:0", {{"runs", runs}, {"failures", failures}, {"rate", rate}, {"ci", {0.0, 0.1}}}}}}}}}};
}

// GPU S1 (GPU-AB)'s three campaigns: on node1 a transient 3/100 (2026-03-02) and a persistent
// 40/100 (2026-03-12, trace other.h5), then on node2 a clean 0/500 (2026-04-01, trace third.h5):
// two failing campaigns 10 days apart, and a move. True when the ledger took all three.
inline bool addS1Campaigns(Ledger& ledger)
{
    return ledger
               .addCampaign({campaignReport("node1", "S1", "GPU-AB", "transient", 3), "a.h5",
                             std::string("2026-03-02T00:00:00Z")},
                            {"node1", "a.h5"})
               .ok() &&
           ledger
               .addCampaign({campaignReport("node1", "S1", "GPU-AB", "persistent", 40, 100, "other.h5"),
                             "b.h5", std::string("2026-03-12T00:00:00Z")},
                            {"node1", "b.h5"})
               .ok() &&
           ledger
               .addCampaign({campaignReport("node2", "S1", "GPU-AB", "healthy", 0, 500, "third.h5"), "c.h5",
                             std::string("2026-04-01T00:00:00Z")},
                            {"node2", "c.h5"})
               .ok();
}

// A `faultline health --json` document of one GPU with one nvidia-smi snapshot at `timestamp`
// (ctime text) and one event.
inline nlohmann::json healthDocument(const std::string& serial, const std::string& uuid,
                                     const std::string& timestamp, bool remapPending, int xid,
                                     const std::string& eventTime)
{
    const nlohmann::json identity = {{"bus_id", "0000:3b:00.0"},
                                     {"uuid", uuid},
                                     {"serial", serial},
                                     {"product", "NVIDIA H100"},
                                     {"vbios_version", "96.00.5E.00.01"},
                                     {"driver_version", "550.127.05"}};
    const nlohmann::json counters = {
        {"ecc_corrected_aggregate", 12},
        {"ecc_uncorrected_aggregate", 1},
        {"remapped_rows",
         {{"correctable", 2}, {"uncorrectable", 1}, {"pending", remapPending}, {"failure", false}}}};
    return {{"format", "faultline-health"},
            {"version", 1},
            {"gpus",
             {{{"bus_id", "0000:3b:00.0"},
               {"uuid", uuid},
               {"serial", serial},
               {"identity", identity},
               {"recommendation", remapPending ? "reset" : "none"},
               {"snapshots",
                {{{"source", "smi.xml"},
                  {"timestamp", timestamp},
                  {"identity", identity},
                  {"counters", counters}}}},
               {"events",
                {{{"kind", "xid"},
                  {"xid", xid},
                  {"time", eventTime},
                  {"bus_id", "0000:3b:00.0"},
                  {"boot_id", "b1"},
                  {"message", "planted event"},
                  {"immediate_action", "RESTART_BM"},
                  {"source", "dmesg:1"}}}}}}},
            {"unattributed_events", nlohmann::json::array()}};
}

}  // namespace faultline::test
