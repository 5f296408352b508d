#pragma once
// Element types Faultline understands, their canonical names (a public interface: they appear in
// `inspect --json`, `compare --json` and written files) and their bit layout.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace faultline {

enum class DType : uint8_t {
    Float64,
    Float32,
    Float16,
    BFloat16,
    Float8E4M3FN,
    Float8E5M2,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Bool,
};

inline constexpr DType kAllDTypes[] = {
    DType::Float64,    DType::Float32, DType::Float16, DType::BFloat16, DType::Float8E4M3FN,
    DType::Float8E5M2, DType::Int8,    DType::Int16,   DType::Int32,    DType::Int64,
    DType::UInt8,      DType::UInt16,  DType::UInt32,  DType::UInt64,   DType::Bool};

// Canonical name: float64 float32 float16 bfloat16 float8_e4m3fn float8_e5m2 int8 int16 int32
// int64 uint8 uint16 uint32 uint64 bool.
std::string_view dtypeName(DType t);
// Parses a canonical name (also accepts numpy/torch spellings such as "bf16", "half", "float").
std::optional<DType> parseDTypeName(std::string_view name);
// Bytes per element (bool is one byte).
unsigned dtypeSize(DType t);
bool isFloatingPoint(DType t);
bool isSignedInteger(DType t);

// Bit fields of a floating-point type; for integers exponentBits = mantissaBits = 0.
struct BitLayout {
    unsigned totalBits;
    unsigned exponentBits;
    unsigned mantissaBits;  // explicit fraction bits
    bool hasSign;
};
BitLayout bitLayout(DType t);

// Names the field bit `bit` (0 = least significant) belongs to: "sign", "exponent", "mantissa"
// for floats, "value" for integers.
std::string_view bitFieldName(DType t, unsigned bit);

}  // namespace faultline
