// libFuzzer target for the sweep report that a sweep results file carries (/report_json), which
// the GUI's links view reads back (readSweepLinkMatrix): the input bytes are the JSON text, read
// by linkMatrixFromSweepJson.
//
// Besides the sanitizers, it aborts when an accepted report breaks a promise: the matrix is not
// ranks × ranks, a cell is not at its own (src, dst), a cell failed more often than it ran, or a
// diagonal cell was tested.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/collectives/LinkMatrix.h"

using namespace faultline;

namespace {

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_link_matrix: invariant broken: %s\n", what);
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const auto json = nlohmann::json::parse(data, data + size, nullptr, false);
    if (json.is_discarded()) return 0;
    auto m = linkMatrixFromSweepJson(json, "fuzz.h5");
    if (!m) {
        check(m.message().rfind("fuzz.h5: ", 0) == 0, "an error that does not name the file");
        return 0;
    }
    const size_t n = m->size();
    check(n >= 2 && n <= kMaxLinkMatrixRanks, "a group size out of range");
    check(m->cells.size() == n * n && m->faultyGpus.size() == n && m->descriptions.size() == n,
          "the matrix is not ranks x ranks");
    for (size_t s = 0; s < n; ++s)
        for (size_t d = 0; d < n; ++d) {
            const LinkCell& c = m->at(s, d);
            check(c.src == s && c.dst == d, "a cell not at its own place");
            check(c.failures <= c.transfers, "a cell failed more often than it ran");
            check(s != d || !c.tested(), "a rank sent to itself");
        }
    (void)m->maxCorruptedBytes();
    (void)m->maxGbps();
    return 0;
}
