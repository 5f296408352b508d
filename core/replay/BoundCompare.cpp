#include "BoundCompare.h"

#include "../compare/TensorComparer.h"

namespace faultline {

Result<Divergence> compareWithinBound(const HostTensor& candidate, const HostTensor& golden,
                                      const std::vector<double>& bound, double factor,
                                      const std::string& name, unsigned threads, size_t topK)
{
    if (candidate.dtype != golden.dtype || candidate.shape != golden.shape)
        return Error{name + ": output is " + std::string(dtypeName(candidate.dtype)) + " " +
                         shapeToString(candidate.shape) + ", expected " +
                         std::string(dtypeName(golden.dtype)) + " " + shapeToString(golden.shape),
                     ErrorCode::Format};
    if (bound.size() != golden.elementCount())
        return Error{name + ": error bound has " + std::to_string(bound.size()) + " elements, the output " +
                         std::to_string(golden.elementCount()),
                     ErrorCode::Format};
    CompareOptions options;
    options.tolerance = Tolerance::bound();
    options.threads = threads;
    options.topK = topK;
    TensorComparer comparer(options);
    comparer.setBoundProvider([&bound, factor](uint64_t first, uint64_t count, double* out) -> Status {
        for (uint64_t i = 0; i < count; ++i) out[i] = bound[first + i] * factor;
        return {};
    });
    return comparer.compare(golden.dtype, golden.shape, candidate.data.data(), golden.data.data(), name);
}

}  // namespace faultline
