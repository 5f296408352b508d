#pragma once
// The human-readable summary of a comparison (`faultline compare` without --json), most severe
// tensor first.
#include <string>

#include "../compare/CompareRun.h"

namespace faultline {

std::string compareText(const CompareReport& report);
// The part about datasets that are not tensors: counts, then each one that differs with its first
// differences ("" when there are none).
std::string recordsText(const CompareReport& report);

}  // namespace faultline
