// A stand-in for `faultline-worker --collective-rank R` where there is no GPU: serveNcclRank with
// a backend that computes each collective on the host. Like NCCL, a rank's "run" returns only
// once every rank of the communicator has joined (a rendezvous on files named after the unique
// id in $FAULTLINE_FAKE_NCCL_DIR), so an orchestrator that reads a reply before sending "run" to
// every rank deadlocks. $FAULTLINE_FAKE_NCCL_FAULT="R:WHAT" makes rank R misbehave in every run:
// hang (never answers), crash (aborts), error (answers an error naming its device), corrupt
// (flips one bit of its output), probe (its device is unusable: the hello is an error).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include "core/collectives/CollectiveNccl.h"
#include "core/golden/OpRegistry.h"

using namespace faultline;

namespace {

std::string faultOf(size_t rank)
{
    const char* f = std::getenv("FAULTLINE_FAKE_NCCL_FAULT");
    const std::string prefix = std::to_string(rank) + ":";
    if (!f || std::string(f).rfind(prefix, 0) != 0) return "";
    return std::string(f).substr(prefix.size());
}

std::string hex(const std::vector<uint8_t>& bytes)
{
    std::string out;
    char b[3];
    for (uint8_t x : bytes) {
        std::snprintf(b, sizeof b, "%02x", x);
        out += b;
    }
    return out;
}

// Waits until every rank has joined the communicator `id`; never returns otherwise (like NCCL).
void rendezvous(const std::vector<uint8_t>& id, size_t rank, size_t ranks)
{
    const std::filesystem::path dir = std::getenv("FAULTLINE_FAKE_NCCL_DIR");
    std::FILE* f = std::fopen((dir / (hex(id) + "." + std::to_string(rank))).c_str(), "w");
    if (f) std::fclose(f);
    for (;;) {
        size_t joined = 0;
        for (size_t r = 0; r < ranks; ++r)
            joined += std::filesystem::exists(dir / (hex(id) + "." + std::to_string(r)));
        if (joined == ranks) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

Result<HostTensor> runOnHost(const CollectiveProblem& p, size_t rank, size_t ranks, int device,
                             const std::vector<uint8_t>& id)
{
    const std::string fault = faultOf(rank);
    if (fault == "error")
        return Error{"cuda:" + std::to_string(device) + ": ncclCommInitRank: unhandled cuda error",
                     ErrorCode::Device};
    if (fault == "crash") std::abort();
    if (fault == "hang")
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    rendezvous(id, rank, ranks);
    HostTensor out(p.inputs[0].dtype, collectiveOutputShape(p));
    const size_t block = p.inputs[0].data.size();
    if (p.kind == CollectiveKind::AllReduce || p.kind == CollectiveKind::ReduceScatter) {
        auto sum = golden::runGolden("all_reduce", p.inputs, {{"reduce_op", p.reduceName}});
        if (!sum) return sum.error();
        const size_t offset = p.kind == CollectiveKind::ReduceScatter ? rank * out.data.size() : 0;
        std::memcpy(out.data.data(), sum->data.data() + offset, out.data.size());
    } else if (p.kind == CollectiveKind::AllGather) {
        for (size_t r = 0; r < ranks; ++r)
            std::memcpy(out.data.data() + r * block, p.inputs[r].data.data(), block);
    } else {
        std::memcpy(out.data.data(), p.inputs[p.root].data.data(), block);
    }
    if (fault == "corrupt" && !out.data.empty()) out.data[0] ^= std::byte{0x40};
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    CollectiveOptions o;
    size_t rank = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        if (key == "--collective-rank") rank = std::stoul(value);
        if (key == "--trace") o.tracePath = value;
        if (key == "--ops") o.ops = value;
        if (key == "--targets")
            if (auto specs = parseTargetList(value))
                for (const TargetSpec& t : *specs) o.targets.push_back(t.text);
    }
    NcclRankBackend backend;
    backend.probe = [rank](int) -> Status {
        if (faultOf(rank) == "probe")
            return Error{"no usable CUDA device: fake driver missing", ErrorCode::Device};
        return {};
    };
    backend.createUniqueId = []() -> Result<std::vector<uint8_t>> {
        std::random_device rd;
        std::vector<uint8_t> id(16);
        for (uint8_t& b : id) b = uint8_t(rd());
        return id;
    };
    backend.run = &runOnHost;
    backend.version = 22703;
    return serveNcclRank(o, rank, &backend, stdin, stdout);
}
