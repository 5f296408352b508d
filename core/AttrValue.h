#pragma once
// An attribute value as files carry them (HDF5 scalar or 1-D attributes; trace op parameters):
// integers, floats or strings, one or a list.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace faultline {

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>>;

// Integers as decimal, floats in their shortest round-trip form, strings as they are; arrays as
// "[1, 2]" / "[0.5, 2]" / "[\"gpu0\", \"gpu1\"]".
std::string attrValueToString(const AttrValue& v);

}  // namespace faultline
