#pragma once
// Judging a replayed or recorded output against the golden model: the divergence engine with
// the op's per-element error bound (times `factor`) as the tolerance.
#include <string>
#include <vector>

#include "../HostTensor.h"
#include "../Result.h"
#include "../compare/Divergence.h"

namespace faultline {

// Errors: different dtypes or shapes (named after `name`), a bound of the wrong length.
Result<Divergence> compareWithinBound(const HostTensor& candidate, const HostTensor& golden,
                                      const std::vector<double>& bound, double factor,
                                      const std::string& name, unsigned threads = 0, size_t topK = 16);

}  // namespace faultline
