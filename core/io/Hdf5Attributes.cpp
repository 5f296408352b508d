#include "Hdf5Attributes.h"

#include <cstring>
#include <limits>

#include "Hdf5Handles.h"

namespace faultline::hdf5 {

namespace {

herr_t collectName(hid_t, const char* name, const H5A_info_t*, void* data)
{
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
}

Error attrError(const std::string& what)
{
    const std::string why = hdf5ErrorText();
    return Error{why.empty() ? what : what + ": " + why, ErrorCode::Format};
}

const char* className(H5T_class_t c)
{
    switch (c) {
        case H5T_INTEGER:
            return "integer";
        case H5T_FLOAT:
            return "float";
        case H5T_TIME:
            return "time";
        case H5T_STRING:
            return "string";
        case H5T_BITFIELD:
            return "bitfield";
        case H5T_OPAQUE:
            return "opaque";
        case H5T_COMPOUND:
            return "compound";
        case H5T_REFERENCE:
            return "reference";
        case H5T_ENUM:
            return "enum";
        case H5T_VLEN:
            return "variable-length sequence";
        case H5T_ARRAY:
            return "array";
        default:
            return "unknown";
    }
}

// Decodes one stored integer of `size` bytes (1, 2, 4 or 8) in `order`.
int64_t decodeInteger(const unsigned char* p, size_t size, H5T_order_t order, bool isSigned)
{
    uint64_t v = 0;
    for (size_t i = 0; i < size; ++i) {
        const size_t byte = order == H5T_ORDER_BE ? size - 1 - i : i;
        v |= uint64_t(p[byte]) << (8 * i);
    }
    if (isSigned && size < 8 && (v >> (8 * size - 1)) & 1) v |= ~uint64_t(0) << (8 * size);
    return int64_t(v);
}

template <class T>
AttrValue scalarOrVector(std::vector<T> values, bool scalar)
{
    if (scalar) return AttrValue{std::move(values.front())};
    return AttrValue{std::move(values)};
}

Result<AttrValue> readIntegers(hid_t attr, hid_t type, uint64_t n, bool scalar)
{
    const bool isUnsigned64 = H5Tget_sign(type) == H5T_SGN_NONE && H5Tget_size(type) >= 8;
    if (isUnsigned64) {
        std::vector<uint64_t> raw(n);
        if (H5Aread(attr, H5T_NATIVE_UINT64, raw.data()) < 0) return attrError("cannot read");
        bool fits = true;
        for (uint64_t v : raw) fits = fits && v <= uint64_t(std::numeric_limits<int64_t>::max());
        if (!fits) {  // beyond int64: keep the magnitude, as a float
            std::vector<double> values(raw.begin(), raw.end());
            return scalarOrVector(std::move(values), scalar);
        }
        std::vector<int64_t> values(raw.begin(), raw.end());
        return scalarOrVector(std::move(values), scalar);
    }
    std::vector<int64_t> values(n);
    if (H5Aread(attr, H5T_NATIVE_INT64, values.data()) < 0) return attrError("cannot read");
    return scalarOrVector(std::move(values), scalar);
}

Result<AttrValue> readEnum(hid_t attr, hid_t type, uint64_t n, bool scalar)
{
    // An enum (h5py's bool is one) is read raw, in its own type, and decoded from its base integer:
    // HDF5 has no enum-to-integer conversion we can rely on.
    TypeHandle base(H5Tget_super(type));
    if (!base || H5Tget_class(base.get()) != H5T_INTEGER)
        return Error{"has an enum type over a non-integer base", ErrorCode::Format};
    const size_t size = H5Tget_size(base.get());
    if (size != 1 && size != 2 && size != 4 && size != 8)
        return Error{"has an enum type of unusual size", ErrorCode::Format};
    const bool isSigned = H5Tget_sign(base.get()) == H5T_SGN_2;
    const H5T_order_t order = H5Tget_order(base.get());
    std::vector<unsigned char> raw(n * size);
    TypeHandle mem(H5Tcopy(type));
    if (!mem || H5Aread(attr, mem.get(), raw.data()) < 0) return attrError("cannot read");
    std::vector<int64_t> values(n);
    for (uint64_t i = 0; i < n; ++i) values[i] = decodeInteger(raw.data() + i * size, size, order, isSigned);
    return scalarOrVector(std::move(values), scalar);
}

Result<AttrValue> readStrings(hid_t attr, hid_t type, hid_t space, uint64_t n, bool scalar)
{
    std::vector<std::string> values;
    values.reserve(n);
    const htri_t variable = H5Tis_variable_str(type);
    if (variable < 0) return attrError("cannot inspect its string type");
    if (variable) {
        TypeHandle mem(H5Tcopy(H5T_C_S1));
        if (!mem || H5Tset_size(mem.get(), H5T_VARIABLE) < 0 || H5Tset_cset(mem.get(), H5Tget_cset(type)) < 0)
            return attrError("cannot make a string type");
        std::vector<char*> raw(n, nullptr);
        if (H5Aread(attr, mem.get(), raw.data()) < 0) return attrError("cannot read");
        for (char* s : raw) values.emplace_back(s ? s : "");
#if H5_VERSION_GE(1, 12, 0)
        H5Treclaim(mem.get(), space, H5P_DEFAULT, raw.data());
#else
        H5Dvlen_reclaim(mem.get(), space, H5P_DEFAULT, raw.data());
#endif
    } else {
        const size_t size = H5Tget_size(type);
        if (size == 0 || size > kMaxAttributeBytes || n * size > kMaxAttributeBytes)
            return Error{"is larger than " + std::to_string(kMaxAttributeBytes >> 20) + " MiB",
                         ErrorCode::Format};
        TypeHandle mem(H5Tcopy(type));
        std::vector<char> raw(n * size);
        if (!mem || H5Aread(attr, mem.get(), raw.data()) < 0) return attrError("cannot read");
        const H5T_str_t pad = H5Tget_strpad(type);
        for (uint64_t i = 0; i < n; ++i) {
            const char* p = raw.data() + i * size;
            size_t len = strnlen(p, size);
            if (pad == H5T_STR_SPACEPAD)
                while (len > 0 && p[len - 1] == ' ') --len;
            values.emplace_back(p, len);
        }
    }
    return scalarOrVector(std::move(values), scalar);
}

}  // namespace

Result<std::vector<std::string>> attributeNames(hid_t obj)
{
    Hdf5Lock lock;
    std::vector<std::string> names;
    hsize_t index = 0;
    if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &index, collectName, &names) < 0)
        return attrError("cannot list attributes");
    return names;
}

Result<AttrValue> readAttribute(hid_t obj, const std::string& name)
{
    Hdf5Lock lock;
    AttrHandle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
    if (!attr) return attrError("cannot open");
    TypeHandle type(H5Aget_type(attr.get()));
    SpaceHandle space(H5Aget_space(attr.get()));
    if (!type || !space) return attrError("cannot read its type");

    uint64_t n = 1;
    bool scalar = true;
    switch (H5Sget_simple_extent_type(space.get())) {
        case H5S_SCALAR:
            break;
        case H5S_SIMPLE: {
            const int rank = H5Sget_simple_extent_ndims(space.get());
            if (rank != 1)
                return Error{"has rank " + std::to_string(rank) + " (only scalars and 1-D arrays are read)",
                             ErrorCode::Format};
            hsize_t dim = 0;
            if (H5Sget_simple_extent_dims(space.get(), &dim, nullptr) < 0)
                return attrError("cannot read its shape");
            n = dim;
            scalar = false;
            break;
        }
        case H5S_NULL:
            return Error{"is empty (null dataspace)", ErrorCode::Format};
        default:
            return attrError("has an unreadable dataspace");
    }
    if (n > kMaxAttributeElements)
        return Error{"has " + std::to_string(n) + " elements (more than " +
                         std::to_string(kMaxAttributeElements) + ")",
                     ErrorCode::Format};

    const H5T_class_t cls = H5Tget_class(type.get());
    switch (cls) {
        case H5T_INTEGER:
            return readIntegers(attr.get(), type.get(), n, scalar);
        case H5T_ENUM:
            return readEnum(attr.get(), type.get(), n, scalar);
        case H5T_FLOAT: {
            std::vector<double> values(n);
            if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, values.data()) < 0) return attrError("cannot read");
            return scalarOrVector(std::move(values), scalar);
        }
        case H5T_STRING:
            return readStrings(attr.get(), type.get(), space.get(), n, scalar);
        default:
            return Error{std::string("has an unsupported type (") + className(cls) + ")", ErrorCode::Format};
    }
}

std::optional<std::string> readStringAttribute(hid_t obj, const std::string& name)
{
    Hdf5Lock lock;
    const htri_t exists = H5Aexists(obj, name.c_str());
    if (exists <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return std::nullopt;
    }
    Result<AttrValue> value = readAttribute(obj, name);
    if (!value) return std::nullopt;
    if (const auto* s = std::get_if<std::string>(&*value)) return *s;
    if (const auto* v = std::get_if<std::vector<std::string>>(&*value); v && v->size() == 1)
        return v->front();
    return std::nullopt;
}

Status writeAttribute(hid_t obj, const std::string& name, const AttrValue& value)
{
    if (name.empty() || name.find('\0') != std::string::npos)
        return Error{"attribute name '" + std::string(name.c_str()) + "' is empty or contains a NUL byte",
                     ErrorCode::Format};
    Hdf5Lock lock;
    const htri_t exists = H5Aexists(obj, name.c_str());
    if (exists > 0 && H5Adelete(obj, name.c_str()) < 0)
        return attrError("cannot replace attribute '" + name + "'");

    TypeHandle stringType(H5Tcopy(H5T_C_S1));
    if (!stringType || H5Tset_size(stringType.get(), H5T_VARIABLE) < 0 ||
        H5Tset_cset(stringType.get(), H5T_CSET_UTF8) < 0)
        return attrError("cannot make a string type");

    hid_t fileType = H5I_INVALID_HID;
    hid_t memType = H5I_INVALID_HID;
    const void* data = nullptr;
    bool scalar = true;
    hsize_t n = 1;
    std::vector<const char*> pointers;
    std::visit(
        [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, int64_t>) {
                fileType = H5T_STD_I64LE;
                memType = H5T_NATIVE_INT64;
                data = &v;
            } else if constexpr (std::is_same_v<T, double>) {
                fileType = H5T_IEEE_F64LE;
                memType = H5T_NATIVE_DOUBLE;
                data = &v;
            } else if constexpr (std::is_same_v<T, std::string>) {
                fileType = memType = stringType.get();
                pointers.push_back(v.c_str());
                data = pointers.data();
            } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
                fileType = H5T_STD_I64LE;
                memType = H5T_NATIVE_INT64;
                data = v.data();
                scalar = false;
                n = v.size();
            } else if constexpr (std::is_same_v<T, std::vector<double>>) {
                fileType = H5T_IEEE_F64LE;
                memType = H5T_NATIVE_DOUBLE;
                data = v.data();
                scalar = false;
                n = v.size();
            } else {
                fileType = memType = stringType.get();
                for (const std::string& s : v) pointers.push_back(s.c_str());
                data = pointers.data();
                scalar = false;
                n = v.size();
            }
        },
        value);

    SpaceHandle space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr));
    if (!space) return attrError("cannot make a dataspace for attribute '" + name + "'");
    AttrHandle attr(H5Acreate2(obj, name.c_str(), fileType, space.get(), H5P_DEFAULT, H5P_DEFAULT));
    if (!attr) return attrError("cannot create attribute '" + name + "'");
    if (n > 0 && H5Awrite(attr.get(), memType, data) < 0)
        return attrError("cannot write attribute '" + name + "'");
    return Status::success();
}

}  // namespace faultline::hdf5
