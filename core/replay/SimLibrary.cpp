#include "SimLibrary.h"

#include "FaultModel.h"
#include "GoldenExact.h"

namespace faultline {

Result<SimLibrary> simLibraryOf(const TargetSpec& spec)
{
    const std::string v = spec.param("library", "golden");
    if (v == "golden") return SimLibrary::Golden;
    if (v == "blas") return SimLibrary::Blas;
    return Error{"target '" + spec.text + "': library must be golden or blas, not '" + v + "'",
                 ErrorCode::Usage};
}

bool simLibraryIsGoldenExact(SimLibrary library, const std::string& op)
{
    return library == SimLibrary::Golden || op != "gemm";
}

uint64_t applySimLibrary(SimLibrary library, const std::string& op, uint64_t opIndex, HostTensor& out)
{
    if (simLibraryIsGoldenExact(library, op) || !isFloatingPoint(out.dtype)) return 0;
    const unsigned width = bitLayout(out.dtype).totalBits;
    const uint64_t sign = uint64_t(1) << (width - 1);
    const uint64_t n = out.elementCount();
    uint64_t changed = 0;
    for (uint64_t i = 0; i < n; ++i) {
        if ((mixSeed(opIndex, i) & 3) != 0) continue;
        const uint64_t bits = elementBits(out, i);
        if ((bits & ~sign) == 0 || !isFiniteBits(out.dtype, bits)) continue;  // ±0, inf, NaN stay
        setElementBits(out, i, bits - 1);  // one ulp towards zero: never leaves the finite range
        ++changed;
    }
    return changed;
}

std::string simLibraryPeerKey(SimLibrary library)
{
    return library == SimLibrary::Blas ? "simulated device, library=blas" : "";
}

}  // namespace faultline
