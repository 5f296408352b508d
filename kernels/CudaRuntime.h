#pragma once
// The CUDA runtime as seen from core's types: device count and errors as Results. CUDA error
// codes enter our code here and leave as Errors whose message names the device.
#include <string>

#include "core/Result.h"

namespace faultline::cuda {

// Number of usable CUDA devices, or an Error explaining why there are none (no driver, no device).
Result<int> deviceCount();

// "cuda:DEVICE: WHAT: cudaErrorName (code): description". device < 0 leaves the device out.
Error cudaErrorFor(int device, const std::string& what, int code);

// True for errors that poison the context (illegal address, launch failure, ECC uncorrectable,
// hardware exceptions): every later call fails too, so the worker must restart.
bool isStickyCudaError(int code);

}  // namespace faultline::cuda
