#pragma once
// What the machine's GPUs are, for reports and the RMA bundle: per device from the CUDA runtime
// (name, UUID, PCI bus id, SMs, memory, clocks, ECC mode) and, where NVML loads
// (dlopen("libnvidia-ml.so.1"), no link-time dependency), serial, board part number, VBIOS,
// InfoROM, ECC counters, remapped rows, temperature and power. Never fails: a missing driver or
// NVML is recorded as a reason. It fills core's DeviceReport (core/devices), whose one JSON
// mapping (deviceReportJson) the worker prints for `faultline devices` and the GUI.
#include <string>

#include "core/devices/DeviceReport.h"

namespace faultline::cuda {

// Queries the runtime and NVML. `nvmlLibrary` is the name handed to dlopen.
DeviceReport collectDeviceInventory(const std::string& nvmlLibrary = "libnvidia-ml.so.1");

}  // namespace faultline::cuda
