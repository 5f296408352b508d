// Peak memory of the fleet merge alone (core/fleet/FleetMerge.h), without the CLI's libraries:
//   bench_fleet_merge_memory OUT.h5 NODE.h5...
// prints the peak resident set size after the first pass (tally and spool) and after the merged
// file is written (bench/RESULTS.md, "Fleet merge").
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "core/fleet/FleetMerge.h"

namespace {

long peakKiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_fleet_merge_memory OUT.h5 NODE.h5...\n");
        return 2;
    }
    const std::string out = argv[1];
    faultline::FleetMerger merger(std::filesystem::absolute(out).parent_path().string());
    for (int i = 2; i < argc; ++i)
        if (faultline::Status st = merger.addFile(argv[i]); !st) {
            std::fprintf(stderr, "%s\n", st.message().c_str());
            return 2;
        }
    const long afterTally = peakKiB();
    if (faultline::Status st = merger.write(out); !st) {
        std::fprintf(stderr, "%s\n", st.message().c_str());
        return 2;
    }
    std::printf("%zu nodes: peak %ld KiB after the first pass, %ld KiB after writing %s\n",
                merger.nodeCount(), afterTally, peakKiB(), out.c_str());
    return 0;
}
