// Writes N simulated node results files (campaign results v1, as `faultline replay --out` writes
// them on a fleet task) for the merge benchmark: G GPUs per node on one peer key, OPS gemm ops,
// REPS runs each with a run record like a real campaign's, and one planted outlier (node N/2,
// GPU 5 with other bits on op 0). Usage: make_fleet_results DIR [NODES=1000] [GPUS=8] [OPS=4] [REPS=3]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/replay/CampaignResultsFile.h"

using nlohmann::json;

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s DIR [NODES] [GPUS] [OPS] [REPS]\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    const int nodes = argc > 2 ? std::atoi(argv[2]) : 1000, gpus = argc > 3 ? std::atoi(argv[3]) : 8,
              ops = argc > 4 ? std::atoi(argv[4]) : 4, reps = argc > 5 ? std::atoi(argv[5]) : 3;
    std::filesystem::create_directories(dir);
    const std::string peerKey =
        "NVIDIA H100 80GB HBM3, 132 SMs, cc 9.0, driver 550.54.15, CUDA 12.4, cuBLAS 12.4.5";
    for (int n = 0; n < nodes; ++n) {
        const std::string host = "gpu" + std::to_string(1000 + n);
        json targets = json::array(), opList = json::array(), runs = json::array(), inventory = json::array();
        for (int g = 0; g < gpus; ++g) {
            targets.push_back({{"target", "cuda:" + std::to_string(g)},
                               {"description", "NVIDIA H100 80GB HBM3 (cuBLAS)"},
                               {"verdict", "healthy"},
                               {"explanation", "all runs within the golden model's bounds"},
                               {"runs", ops * reps},
                               {"executed_runs", ops * reps},
                               {"not_replayable_runs", 0},
                               {"failures", 0},
                               {"failing_ops", json::array()},
                               {"reproducing_ops", json::array()},
                               {"determinism", {{"expected", true}, {"certified", true}}},
                               {"peer_key", peerKey},
                               {"rate", 0.0},
                               {"ci", {0.0, 0.2425}}});
            inventory.push_back({{"index", g},
                                 {"name", "NVIDIA H100 80GB HBM3"},
                                 {"uuid", "GPU-" + std::to_string(n) + "-" + std::to_string(g)},
                                 {"serial", "16542" + std::to_string(100000 + n * 8 + g)},
                                 {"pci_bus_id", "00000000:" + std::to_string(10 + g) + ":00.0"},
                                 {"sm_count", 132},
                                 {"peer_key", peerKey}});
        }
        for (int o = 0; o < ops; ++o) {
            json perTarget = json::object();
            for (int g = 0; g < gpus; ++g) {
                const bool outlier = n == nodes / 2 && g == 5 && o == 0;
                const std::string digest =
                    outlier ? "xxh64:deadbeefdeadbeef" : "xxh64:" + std::to_string(9000 + o);
                perTarget["cuda:" + std::to_string(g)] = {
                    {"runs", reps},       {"failures", 0},         {"mismatches", 0},
                    {"hangs", 0},         {"crashes", 0},          {"errors", 0},
                    {"device_faults", 0}, {"distinct_outputs", 1}, {"max_ulp", 2},
                    {"signature", ""},    {"peer_mismatches", 0},  {"rate", 0.0},
                    {"ci", {0.0, 0.56}},  {"first_digest", digest}};
                for (int r = 0; r < reps; ++r)
                    runs.push_back(
                        {{"target", "cuda:" + std::to_string(g)},
                         {"op_index", o},
                         {"op", "gemm"},
                         {"name", "layers." + std::to_string(o) + ".mlp.fc1"},
                         {"rep", r},
                         {"outcome", "ok"},
                         {"digest", digest},
                         {"golden_exact", false},
                         {"peer_key", peerKey},
                         {"vs_golden", {{"mismatches", 812}, {"beyond_tolerance", 0}, {"max_ulp", 2}}},
                         {"millis", 3.2}});
            }
            opList.push_back({{"index", o},
                              {"op", "gemm"},
                              {"name", "layers." + std::to_string(o) + ".mlp.fc1"},
                              {"targets", perTarget}});
        }
        const json doc = {{"trace", "/shared/incidents/4711/trace.h5"},
                          {"reps", reps},
                          {"seed", 1},
                          {"ops_selected", json::array()},
                          {"targets", targets},
                          {"ops", opList},
                          {"runs", runs},
                          {"warnings", json::array()},
                          {"cancelled", false},
                          {"reference", nullptr},
                          {"node",
                           {{"host", host},
                            {"scheduler", "slurm"},
                            {"job_id", "4711"},
                            {"task", std::to_string(n)},
                            {"inventory", {{"driver_version", "550.54.15"}, {"gpus", inventory}}}}}};
        const std::string path = dir + "/" + std::to_string(n) + ".h5";
        if (auto st = faultline::writeCampaignResultsJson(path, doc); !st) {
            std::fprintf(stderr, "%s\n", st.message().c_str());
            return 2;
        }
    }
    std::printf("%d node results (%d GPUs, %d ops, %d reps each) in %s\n", nodes, gpus, ops, reps,
                dir.c_str());
    return 0;
}
