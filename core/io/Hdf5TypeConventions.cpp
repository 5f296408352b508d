#include "Hdf5TypeConventions.h"

#include <cstring>

namespace faultline::hdf5 {

namespace {

struct FloatFields {
    size_t size, spos, epos, esize, mpos, msize, ebias;
};

constexpr FloatFields kFloat64{8, 63, 52, 11, 0, 52, 1023};
constexpr FloatFields kFloat32{4, 31, 23, 8, 0, 23, 127};
constexpr FloatFields kFloat16{2, 15, 10, 5, 0, 10, 15};
constexpr FloatFields kBFloat16{2, 15, 7, 8, 0, 7, 127};
constexpr FloatFields kFloat8E4M3{1, 7, 3, 4, 0, 3, 7};
constexpr FloatFields kFloat8E5M2{1, 7, 2, 5, 0, 2, 15};

TypeHandle customFloat(const FloatFields& f, H5T_order_t order)
{
    Hdf5Lock lock;
    TypeHandle t(H5Tcopy(order == H5T_ORDER_BE ? H5T_IEEE_F32BE : H5T_IEEE_F32LE));
    if (!t) return t;
    if (H5Tset_fields(t.get(), f.spos, f.epos, f.esize, f.mpos, f.msize) < 0 ||
        H5Tset_precision(t.get(), 8 * f.size) < 0 || H5Tset_size(t.get(), f.size) < 0 ||
        H5Tset_ebias(t.get(), f.ebias) < 0)
        return TypeHandle{};
    return t;
}

bool matchesFloat(hid_t t, const FloatFields& f)
{
    size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
    if (H5Tget_size(t) != f.size || H5Tget_precision(t) != 8 * f.size || H5Tget_offset(t) != 0) return false;
    if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0) return false;
    return spos == f.spos && epos == f.epos && esize == f.esize && mpos == f.mpos && msize == f.msize &&
           H5Tget_ebias(t) == f.ebias && H5Tget_norm(t) == H5T_NORM_IMPLIED;
}

// A copy of `t` in little-endian order: reading into it at most swaps bytes.
TypeHandle littleEndianCopy(hid_t t)
{
    TypeHandle copy(H5Tcopy(t));
    if (copy && H5Tget_order(t) == H5T_ORDER_BE && H5Tset_order(copy.get(), H5T_ORDER_LE) < 0)
        return TypeHandle{};
    return copy;
}

bool isH5pyBoolEnum(hid_t t)
{
    if (H5Tget_size(t) != 1 || H5Tget_nmembers(t) != 2) return false;
    bool sawFalse = false, sawTrue = false;
    for (unsigned i = 0; i < 2; ++i) {
        char* name = H5Tget_member_name(t, i);
        if (!name) return false;
        unsigned char value = 0xff;
        const bool gotValue = H5Tget_member_value(t, i, &value) >= 0;
        if (gotValue && std::strcmp(name, "FALSE") == 0 && value == 0) sawFalse = true;
        if (gotValue && std::strcmp(name, "TRUE") == 0 && value == 1) sawTrue = true;
        H5free_memory(name);
    }
    return sawFalse && sawTrue;
}

DType integerDType(size_t size, bool isSigned)
{
    switch (size) {
        case 1:
            return isSigned ? DType::Int8 : DType::UInt8;
        case 2:
            return isSigned ? DType::Int16 : DType::UInt16;
        case 4:
            return isSigned ? DType::Int32 : DType::UInt32;
        default:
            return isSigned ? DType::Int64 : DType::UInt64;
    }
}

std::string orderSuffix(hid_t t)
{
    return H5Tget_order(t) == H5T_ORDER_BE ? ", big-endian" : "";
}

Result<TypeConvention> convention(DType dtype, std::string storage, TypeHandle memoryType)
{
    if (!memoryType) return Error{"cannot make a memory type: " + hdf5ErrorText(), ErrorCode::Io};
    TypeConvention c;
    c.dtype = dtype;
    c.storage = std::move(storage);
    c.memoryType = std::move(memoryType);
    return c;
}

// The stored bits are an integer or opaque of `size` bytes: a dtype attribute of the same size
// says what they mean.
std::optional<DType> reinterpretation(const std::optional<std::string>& attribute, size_t size,
                                      std::string* note)
{
    if (!attribute) return std::nullopt;
    const auto parsed = parseDTypeName(*attribute);
    if (!parsed) {
        *note = "dtype attribute '" + *attribute + "' not understood; read as stored";
        return std::nullopt;
    }
    if (dtypeSize(*parsed) != size) {
        *note = "dtype attribute '" + *attribute + "' does not fit " + std::to_string(size) +
                "-byte elements; read as stored";
        return std::nullopt;
    }
    return parsed;
}

}  // namespace

TypeHandle bfloat16Type(H5T_order_t order)
{
    return customFloat(kBFloat16, order);
}

Result<TypeConvention> classifyStoredType(hid_t fileType, const std::optional<std::string>& dtypeAttribute,
                                          std::string* note)
{
    Hdf5Lock lock;
    const H5T_class_t cls = H5Tget_class(fileType);
    const size_t size = H5Tget_size(fileType);
    const H5T_order_t order = H5Tget_order(fileType);
    switch (cls) {
        case H5T_INTEGER: {
            if ((size != 1 && size != 2 && size != 4 && size != 8) ||
                H5Tget_precision(fileType) != 8 * size || H5Tget_offset(fileType) != 0)
                return Error{"integer type with " + std::to_string(H5Tget_precision(fileType)) +
                                 "-bit precision in " + std::to_string(size) + " bytes",
                             ErrorCode::Format};
            if (order != H5T_ORDER_LE && order != H5T_ORDER_BE)
                return Error{"integer type of unknown byte order", ErrorCode::Format};
            const DType stored = integerDType(size, H5Tget_sign(fileType) == H5T_SGN_2);
            if (auto meant = reinterpretation(dtypeAttribute, size, note); meant && *meant != stored)
                return convention(*meant, std::string(dtypeName(stored)) + "+dtype" + orderSuffix(fileType),
                                  littleEndianCopy(fileType));
            return convention(stored, "int" + orderSuffix(fileType), littleEndianCopy(fileType));
        }
        case H5T_FLOAT: {
            if (order != H5T_ORDER_LE && order != H5T_ORDER_BE)
                return Error{"floating-point type of unknown byte order", ErrorCode::Format};
            std::optional<DType> dtype;
            std::string storage = "float";
            if (matchesFloat(fileType, kFloat64))
                dtype = DType::Float64;
            else if (matchesFloat(fileType, kFloat32))
                dtype = DType::Float32;
            else if (matchesFloat(fileType, kFloat16))
                dtype = DType::Float16;
            else if (matchesFloat(fileType, kBFloat16)) {
                dtype = DType::BFloat16;
                storage = "hdf5-custom-float";
            } else if (matchesFloat(fileType, kFloat8E4M3) || matchesFloat(fileType, kFloat8E5M2)) {
                // HDF5 cannot tell e4m3fn (no infinities) from other 8-bit layouts: only a dtype
                // attribute may say which it is. Read raw, never converted (1.10 decodes them wrongly).
                const bool e4m3 = matchesFloat(fileType, kFloat8E4M3);
                const DType expected = e4m3 ? DType::Float8E4M3FN : DType::Float8E5M2;
                const auto parsed = dtypeAttribute ? parseDTypeName(*dtypeAttribute) : std::nullopt;
                if (!parsed || *parsed != expected)
                    return Error{std::string("8-bit HDF5 custom float (") + (e4m3 ? "e4m3" : "e5m2") +
                                     ") without a matching dtype attribute",
                                 ErrorCode::Format};
                return convention(expected, "hdf5-custom-float+dtype", littleEndianCopy(fileType));
            } else {
                size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
                H5Tget_fields(fileType, &spos, &epos, &esize, &mpos, &msize);
                return Error{"floating-point layout not understood (" + std::to_string(size) + " bytes, " +
                                 std::to_string(esize) + " exponent bits, " + std::to_string(msize) +
                                 " mantissa bits)",
                             ErrorCode::Format};
            }
            if (dtypeAttribute) {
                const auto parsed = parseDTypeName(*dtypeAttribute);
                if (!parsed || *parsed != *dtype)
                    *note = "dtype attribute '" + *dtypeAttribute + "' contradicts the stored " +
                            std::string(dtypeName(*dtype)) + "; read as stored";
            }
            return convention(*dtype, storage + orderSuffix(fileType), littleEndianCopy(fileType));
        }
        case H5T_ENUM: {
            if (isH5pyBoolEnum(fileType))
                return convention(DType::Bool, "h5py-bool-enum", TypeHandle(H5Tcopy(fileType)));
            return Error{"enumerated type (other than h5py's bool)", ErrorCode::Format};
        }
        case H5T_OPAQUE: {
            if (auto meant = reinterpretation(dtypeAttribute, size, note))
                return convention(*meant, "opaque+dtype", TypeHandle(H5Tcopy(fileType)));
            char* tag = H5Tget_tag(fileType);
            const bool emptyTag = !tag || tag[0] == '\0';
            if (tag) H5free_memory(tag);
            if (size == 2 && emptyTag)
                return convention(DType::BFloat16, "opaque2", TypeHandle(H5Tcopy(fileType)));
            return Error{"opaque type of " + std::to_string(size) + " bytes", ErrorCode::Format};
        }
        case H5T_STRING:
            return Error{"strings", ErrorCode::Format};
        case H5T_COMPOUND:
            return Error{"compound type", ErrorCode::Format};
        case H5T_REFERENCE:
            return Error{"references", ErrorCode::Format};
        case H5T_VLEN:
            return Error{"variable-length sequences", ErrorCode::Format};
        case H5T_ARRAY:
            return Error{"array element type", ErrorCode::Format};
        case H5T_BITFIELD:
            return Error{"bitfield type", ErrorCode::Format};
        case H5T_TIME:
            return Error{"time type", ErrorCode::Format};
        default:
            return Error{"unreadable element type", ErrorCode::Format};
    }
}

TypeHandle writtenType(DType dtype)
{
    Hdf5Lock lock;
    switch (dtype) {
        case DType::Float64:
            return TypeHandle(H5Tcopy(H5T_IEEE_F64LE));
        case DType::Float32:
            return TypeHandle(H5Tcopy(H5T_IEEE_F32LE));
        case DType::Float16:
            return customFloat(kFloat16, H5T_ORDER_LE);
        case DType::BFloat16:
            return bfloat16Type(H5T_ORDER_LE);
        case DType::Float8E4M3FN:
        case DType::Float8E5M2:
        case DType::UInt8:
            return TypeHandle(H5Tcopy(H5T_STD_U8LE));
        case DType::Int8:
            return TypeHandle(H5Tcopy(H5T_STD_I8LE));
        case DType::Int16:
            return TypeHandle(H5Tcopy(H5T_STD_I16LE));
        case DType::Int32:
            return TypeHandle(H5Tcopy(H5T_STD_I32LE));
        case DType::Int64:
            return TypeHandle(H5Tcopy(H5T_STD_I64LE));
        case DType::UInt16:
            return TypeHandle(H5Tcopy(H5T_STD_U16LE));
        case DType::UInt32:
            return TypeHandle(H5Tcopy(H5T_STD_U32LE));
        case DType::UInt64:
            return TypeHandle(H5Tcopy(H5T_STD_U64LE));
        case DType::Bool: {
            TypeHandle t(H5Tenum_create(H5T_STD_I8LE));
            const signed char no = 0, yes = 1;
            if (!t || H5Tenum_insert(t.get(), "FALSE", &no) < 0 || H5Tenum_insert(t.get(), "TRUE", &yes) < 0)
                return TypeHandle{};
            return t;
        }
    }
    return TypeHandle{};
}

bool writesDtypeAttribute(DType dtype)
{
    return dtype == DType::BFloat16 || dtype == DType::Float8E4M3FN || dtype == DType::Float8E5M2;
}

}  // namespace faultline::hdf5
