// bench_compare_memory: the compare engine's scan on in-memory tensors (no file reading), beside
// a plain loop that only counts differing words: the scalar path on one thread, the vector path
// (Highway, the target dispatched on this CPU) on one thread and on all cores.
// Usage: bench_compare_memory [float32|bfloat16] [SIZE] [FRACTION] [REPS]
// Prints ns per element and the ratio, and a digest of the result (counts, means, histograms)
// so that a change to the engine can be checked to leave the analysis unchanged.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/FloatFormats.h"
#include "core/compare/CompareJson.h"
#include "core/compare/MismatchMath.h"
#include "core/compare/TensorComparer.h"

using namespace faultline;

namespace {

double seconds(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU time of the whole process (all threads): on a shared machine it counts only the time this
// process actually ran, so per-element figures stay comparable when other work competes.
double cpuSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

template <class B>
uint64_t countDiffering(const B* a, const B* b, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; ++i) c += a[i] != b[i];
    return c;
}

}  // namespace

int main(int argc, char** argv)
{
    const std::string dtypeName = argc > 1 ? argv[1] : "float32";
    const uint64_t size = argc > 2 ? std::stoull(argv[2]) : 4096;
    const double fraction = argc > 3 ? std::stod(argv[3]) : 0.30;
    const int reps = argc > 4 ? std::stoi(argv[4]) : 3;
    const bool bf16 = dtypeName == "bfloat16";
    const size_t n = size_t(size * size);
    const size_t width = bf16 ? 2 : 4;

    // Reference: normal(0, 0.02) values; suspect: `fraction` of them one ulp larger in magnitude
    // (what bench/compare/make_pair.py writes).
    std::vector<std::byte> ref(n * width), sus(n * width);
    std::mt19937_64 rng(1234);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::uniform_real_distribution<double> uni(0.0, 1.0);
    for (size_t i = 0; i < n; ++i) {
        const uint32_t f = floatBits(normal(rng));
        const uint32_t bump = uni(rng) < fraction ? 1u : 0u;
        if (bf16) {
            const uint16_t r = uint16_t(f >> 16), s = uint16_t(r + bump);
            std::memcpy(&ref[i * 2], &r, 2);
            std::memcpy(&sus[i * 2], &s, 2);
        } else {
            const uint32_t s = f + bump;
            std::memcpy(&ref[i * 4], &f, 4);
            std::memcpy(&sus[i * 4], &s, 4);
        }
    }
    const DType dtype = bf16 ? DType::BFloat16 : DType::Float32;
    std::printf("in-memory compare: %s %llux%llu, %.0f%% of elements 1 ulp apart, best of %d\n",
                dtypeName.c_str(), (unsigned long long)size, (unsigned long long)size, fraction * 100, reps);

    double plain = 1e30, plainCpu = 1e30;
    uint64_t plainCount = 0;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpuSeconds();
        plainCount = bf16 ? countDiffering(reinterpret_cast<const uint16_t*>(sus.data()),
                                           reinterpret_cast<const uint16_t*>(ref.data()), n)
                          : countDiffering(reinterpret_cast<const uint32_t*>(sus.data()),
                                           reinterpret_cast<const uint32_t*>(ref.data()), n);
        plainCpu = std::min(plainCpu, cpuSeconds() - c0);
        plain = std::min(plain, seconds(t0));
    }
    std::printf("%-34s %7.2f ns/element  CPU %.2f ns/element (%llu differ)\n", "plain count loop (1 thread)",
                plain * 1e9 / double(n), plainCpu * 1e9 / double(n), (unsigned long long)plainCount);

    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    // The scalar path (CompareOptions::vectorMath = false, the reference the vector path is
    // tested against) on one thread, then the vector path on one thread and on all cores.
    struct Config {
        unsigned threads;
        bool vectorMath;
    };
    std::printf("vector path: Highway target %s\n",
                mismatchMathTargetName(mismatchMathActiveTarget()).c_str());
    for (const Config cfg : {Config{1, false}, Config{1, true}, Config{cores, true}}) {
        const unsigned threads = cfg.threads;
        CompareOptions opt;
        opt.threads = threads;
        opt.vectorMath = cfg.vectorMath;
        TensorComparer comparer(opt);
        double best = 1e30, bestCpu = 1e30;
        Divergence d;
        for (int r = 0; r < reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            const double c0 = cpuSeconds();
            auto res = comparer.compare(dtype, {size, size}, sus.data(), ref.data(), "t");
            bestCpu = std::min(bestCpu, cpuSeconds() - c0);
            best = std::min(best, seconds(t0));
            if (!res) {
                std::fprintf(stderr, "bench_compare_memory: %s\n", res.error().message.c_str());
                return 2;
            }
            d = std::move(*res);
        }
        std::printf(
            "faultline %s (%u thr)  %7.2f ns/element  %.1fx the plain loop; CPU %.2f ns/element, "
            "%.2f ns/mismatch\n",
            cfg.vectorMath ? "vector" : "scalar", threads, best * 1e9 / double(n), best / plain,
            bestCpu * 1e9 / double(n), bestCpu * 1e9 / double(std::max<uint64_t>(1, d.mismatches)));
        if (threads == 1) {  // the same digest for both paths: the vector path changes no figure
            const std::string digest = divergenceToJson(d).dump();
            std::printf(
                "digest: mismatches %llu, mean abs %.17g, rms abs %.17g, mean rel %.17g, json %zu bytes, "
                "hash %016llx\n",
                (unsigned long long)d.mismatches, d.absError.mean, d.absError.rms, d.relError.mean,
                digest.size(), (unsigned long long)std::hash<std::string>{}(digest));
        }
    }
    return 0;
}
