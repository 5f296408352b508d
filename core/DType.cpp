#include "DType.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace faultline {

std::string_view dtypeName(DType t)
{
    switch (t) {
        case DType::Float64:
            return "float64";
        case DType::Float32:
            return "float32";
        case DType::Float16:
            return "float16";
        case DType::BFloat16:
            return "bfloat16";
        case DType::Float8E4M3FN:
            return "float8_e4m3fn";
        case DType::Float8E5M2:
            return "float8_e5m2";
        case DType::Int8:
            return "int8";
        case DType::Int16:
            return "int16";
        case DType::Int32:
            return "int32";
        case DType::Int64:
            return "int64";
        case DType::UInt8:
            return "uint8";
        case DType::UInt16:
            return "uint16";
        case DType::UInt32:
            return "uint32";
        case DType::UInt64:
            return "uint64";
        case DType::Bool:
            return "bool";
    }
    return "unknown";
}

std::optional<DType> parseDTypeName(std::string_view name)
{
    std::string n(name);
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    for (DType t : kAllDTypes)
        if (n == dtypeName(t)) return t;
    struct Alias {
        const char* name;
        DType type;
    };
    static constexpr Alias aliases[] = {
        {"double", DType::Float64},
        {"f64", DType::Float64},
        {"float", DType::Float32},
        {"f32", DType::Float32},
        {"half", DType::Float16},
        {"f16", DType::Float16},
        {"bf16", DType::BFloat16},
        {"fp64", DType::Float64},
        {"fp32", DType::Float32},
        {"fp16", DType::Float16},
        {"float8_e4m3", DType::Float8E4M3FN},
        {"f8_e4m3", DType::Float8E4M3FN},
        {"f8_e4m3fn", DType::Float8E4M3FN},
        {"e4m3", DType::Float8E4M3FN},
        {"f8_e5m2", DType::Float8E5M2},
        {"e5m2", DType::Float8E5M2},
        {"i8", DType::Int8},
        {"i16", DType::Int16},
        {"i32", DType::Int32},
        {"i64", DType::Int64},
        {"u8", DType::UInt8},
        {"u16", DType::UInt16},
        {"u32", DType::UInt32},
        {"u64", DType::UInt64},
        {"bool_", DType::Bool},
        {"boolean", DType::Bool},
    };
    for (const Alias& a : aliases)
        if (n == a.name) return a.type;
    return std::nullopt;
}

unsigned dtypeSize(DType t)
{
    switch (t) {
        case DType::Float64:
        case DType::Int64:
        case DType::UInt64:
            return 8;
        case DType::Float32:
        case DType::Int32:
        case DType::UInt32:
            return 4;
        case DType::Float16:
        case DType::BFloat16:
        case DType::Int16:
        case DType::UInt16:
            return 2;
        case DType::Float8E4M3FN:
        case DType::Float8E5M2:
        case DType::Int8:
        case DType::UInt8:
        case DType::Bool:
            return 1;
    }
    return 0;
}

bool isFloatingPoint(DType t)
{
    switch (t) {
        case DType::Float64:
        case DType::Float32:
        case DType::Float16:
        case DType::BFloat16:
        case DType::Float8E4M3FN:
        case DType::Float8E5M2:
            return true;
        default:
            return false;
    }
}

bool isSignedInteger(DType t)
{
    return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64;
}

BitLayout bitLayout(DType t)
{
    switch (t) {
        case DType::Float64:
            return {64, 11, 52, true};
        case DType::Float32:
            return {32, 8, 23, true};
        case DType::Float16:
            return {16, 5, 10, true};
        case DType::BFloat16:
            return {16, 8, 7, true};
        case DType::Float8E4M3FN:
            return {8, 4, 3, true};
        case DType::Float8E5M2:
            return {8, 5, 2, true};
        case DType::Bool:
            return {8, 0, 0, false};
        default:
            return {dtypeSize(t) * 8, 0, 0, isSignedInteger(t)};
    }
}

std::string_view bitFieldName(DType t, unsigned bit)
{
    const BitLayout l = bitLayout(t);
    if (!isFloatingPoint(t)) return "value";
    if (bit < l.mantissaBits) return "mantissa";
    if (bit < l.mantissaBits + l.exponentBits) return "exponent";
    return "sign";
}

}  // namespace faultline
