#pragma once
// `nvidia-smi -q -x` output read into health snapshots, one per <gpu>. Keyed on element names, not
// on the DTD version (nvsmi_device_v11 ... v13 and later): sections that moved or were renamed
// between drivers (power_readings / gpu_power_readings, single/double-bit / SRAM/DRAM ECC counters,
// remapped rows that are just "N/A") are all understood; unknown elements are ignored.
// Untrusted input: the file is bounded (kMaxXmlBytes), DOCTYPEs that declare entities are refused and
// no entity is expanded.
#include <string>
#include <string_view>
#include <vector>

#include "../Result.h"
#include "HealthReport.h"

namespace faultline {

// `source` names the file in errors ("FILE:LINE: problem") and in each snapshot.
Result<std::vector<GpuHealthSnapshot>> parseNvidiaSmiXml(std::string_view xml, const std::string& source);
Result<std::vector<GpuHealthSnapshot>> readNvidiaSmiXml(const std::string& path);

}  // namespace faultline
