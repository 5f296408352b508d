#include "RecordInfo.h"

#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstring>

#include "FloatFormats.h"

namespace faultline {

namespace {

// The first min(size, 8) little-endian bytes of a value as a number.
uint64_t littleEndian(const unsigned char* p, unsigned size)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < size && i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
    return v;
}

std::string hexBytes(const unsigned char* p, unsigned size)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out = "0x";
    for (unsigned i = size; i-- > 0;) {  // most significant first
        out += kDigits[p[i] >> 4];
        out += kDigits[p[i] & 15];
    }
    return out;
}

template <class T>
std::string shortest(T value)
{
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, value);
    return std::string(buf, r.ptr);
}

std::string floatText(const RecordField& field, const unsigned char* p)
{
    const std::string bits = hexBytes(p, field.size);
    auto show = [&bits](auto v) { return std::isnan(v) ? "nan (" + bits + ")" : shortest(v); };
    if (field.type == "float16" && field.size == 2) return show(halfToFloat(uint16_t(littleEndian(p, 2))));
    if (field.type == "bfloat16" && field.size == 2) return show(bf16ToFloat(uint16_t(littleEndian(p, 2))));
    if (field.type == "float32" && field.size == 4) return show(floatFromBits(uint32_t(littleEndian(p, 4))));
    if (field.type == "float64" && field.size == 8) return show(doubleFromBits(littleEndian(p, 8)));
#if LDBL_MANT_DIG == 64
    if (field.type == "long double (x87 80-bit)" && field.size == 10) {
        long double v = 0;
        std::memcpy(&v, p, 10);
        return show(v);
    }
#endif
    return bits;
}

}  // namespace

bool RecordColumn::equal(const RecordField& field, uint64_t i, const RecordColumn& other) const
{
    if (!field.fixed()) return text[size_t(i)] == other.text[size_t(i)];
    return std::memcmp(bytes.data() + i * field.size, other.bytes.data() + i * field.size, field.size) == 0;
}

std::string recordValueText(const RecordField& field, const RecordColumn& column, uint64_t i)
{
    if (!field.fixed()) {
        const std::string& t = column.text[size_t(i)];
        return field.kind == RecordValueKind::String ? "\"" + t + "\"" : t;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(column.bytes.data()) + i * field.size;
    switch (field.kind) {
        case RecordValueKind::Int: {
            if (field.size > 8) return hexBytes(p, field.size);
            uint64_t v = littleEndian(p, field.size);
            if (field.size < 8 && (v >> (8 * field.size - 1)) != 0) v |= ~uint64_t(0) << (8 * field.size);
            return std::to_string(int64_t(v));
        }
        case RecordValueKind::UInt:
            return field.size > 8 ? hexBytes(p, field.size) : std::to_string(littleEndian(p, field.size));
        case RecordValueKind::Float:
            return floatText(field, p);
        case RecordValueKind::Enum: {
            const uint64_t v = littleEndian(p, field.size);
            for (const auto& [value, name] : field.enumNames)
                if (value == v) return name;
            return std::to_string(v) + " (no name)";
        }
        case RecordValueKind::Opaque: {  // bytes in stored order
            static constexpr char kDigits[] = "0123456789abcdef";
            std::string out;
            for (unsigned b = 0; b < field.size; ++b) {
                out += kDigits[p[b] >> 4];
                out += kDigits[p[b] & 15];
            }
            return out;
        }
        default:
            return hexBytes(p, field.size);
    }
}

}  // namespace faultline
