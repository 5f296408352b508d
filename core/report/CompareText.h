#pragma once
// The human-readable summary of a comparison (`faultline compare` without --json), most severe
// tensor first.
#include <string>

#include "../compare/CompareRun.h"

namespace faultline {

std::string compareText(const CompareReport& report);

}  // namespace faultline
