#pragma once
// The CUDA runtime as seen from core's types: device count and errors as Results.
#include <string>

#include "core/Result.h"

namespace faultline::cuda {

// Number of usable CUDA devices, or an Error explaining why there are none (no driver, no device).
Result<int> deviceCount();

}  // namespace faultline::cuda
