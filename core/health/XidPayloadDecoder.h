#pragma once
// Fields of an Xid message whose layout NVIDIA documents: the memory location of Xid 48, the
// address and mechanism of 63/64, the unit and reset flags of 94/95, the link and error-register
// bits of 74, the NVLink 5 fields of 144-150, the recovery action of 154, the GPC/TPC/SM of 13 and
// the faulting address of 31. Messages that do not have the documented shape decode to nothing.
#include <string>
#include <string_view>
#include <vector>

#include "HealthReport.h"

namespace faultline {

class XidCatalog;

// `decoder` is the catalogue entry's "decoder" ("dbe", "retirement", "containment",
// "nvlink_registers", "nvlink5", "recovery_action", "gr_location", "mmu_fault", or "").
std::vector<XidDecodedField> decodeXidPayload(const XidCatalog& catalog, const std::string& decoder,
                                              std::string_view message);

// The value of a decoded field, "" when absent.
std::string decodedValue(const std::vector<XidDecodedField>& fields, std::string_view name);

}  // namespace faultline
