#pragma once
// Type checks for numbers read from JSON that came from elsewhere (journals, worker replies).
// nlohmann::json converts a number of any kind to the integer type asked for, and a
// floating-point value out of that type's range is undefined behaviour: check first.
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

namespace faultline {

// A non-negative integer (any size that fits uint64).
inline bool isJsonCount(const nlohmann::json& v)
{
    return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

// An integer that fits int32.
inline bool isJsonInt32(const nlohmann::json& v)
{
    if (v.is_number_unsigned()) return v.get<uint64_t>() <= uint64_t(std::numeric_limits<int32_t>::max());
    if (!v.is_number_integer()) return false;
    const int64_t x = v.get<int64_t>();
    return x >= std::numeric_limits<int32_t>::min() && x <= std::numeric_limits<int32_t>::max();
}

}  // namespace faultline
