#include "Hdf5Records.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "FlatRange.h"

namespace faultline::hdf5 {

namespace {

constexpr int kMaxNesting = 32;
constexpr size_t kMaxValuesPerElement = size_t(1) << 20;  // array members beyond this are refused

using Placement = RecordLayout::Placement;

// A type's fields and memory type as they are built up, member by member.
struct Draft {
    std::string type;  // the type in words
    TypeHandle memoryType;
    size_t memorySize = 0;
    bool variable = false;
    std::vector<RecordField> fields;
    std::vector<Placement> placements;
};

Result<Draft> build(hid_t t, int depth);

// The bytes of an atomic number type that hold its value: [first, first + count).
void significantBytes(hid_t t, unsigned* first, unsigned* count)
{
    const size_t offset = H5Tget_offset(t), precision = H5Tget_precision(t);
    *first = unsigned(offset / 8);
    *count = unsigned((offset + precision + 7) / 8 - offset / 8);
}

// A copy of `t` in little-endian order (numbers other than enums).
TypeHandle littleEndian(hid_t t)
{
    TypeHandle copy(H5Tcopy(t));
    if (copy && H5Tget_order(t) == H5T_ORDER_BE && H5Tset_order(copy.get(), H5T_ORDER_LE) < 0)
        return TypeHandle{};
    return copy;
}

Result<Draft> atomic(hid_t t, RecordField field, std::string type, TypeHandle memory, unsigned significant)
{
    if (!memory) return Error{"cannot make a memory type: " + hdf5ErrorText(), ErrorCode::Io};
    Draft d;
    d.type = std::move(type);
    d.memorySize = H5Tget_size(memory.get());
    d.memoryType = std::move(memory);
    Placement p;
    p.offsets = {0};
    p.significantOffset = significant;
    d.fields.push_back(std::move(field));
    d.placements.push_back(std::move(p));
    (void)t;
    return d;
}

std::string integerName(hid_t t, bool isSigned)
{
    const size_t size = H5Tget_size(t), precision = H5Tget_precision(t);
    const std::string base = isSigned ? "int" : "uint";
    if (H5Tget_offset(t) == 0 && precision == 8 * size && (size == 1 || size == 2 || size == 4 || size == 8))
        return base + std::to_string(8 * size);
    return base + " (" + std::to_string(precision) + "-bit in " + std::to_string(size) + " bytes)";
}

std::string floatName(hid_t t)
{
    size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
    H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize);
    const size_t size = H5Tget_size(t), precision = H5Tget_precision(t), offset = H5Tget_offset(t),
                 bias = H5Tget_ebias(t);
    const H5T_norm_t norm = H5Tget_norm(t);
    auto ieee = [&](size_t bytes, size_t e, size_t m, size_t b) {
        return size == bytes && precision == 8 * bytes && offset == 0 && spos == 8 * bytes - 1 && epos == m &&
               esize == e && mpos == 0 && msize == m && bias == b && norm == H5T_NORM_IMPLIED;
    };
    if (ieee(8, 11, 52, 1023)) return "float64";
    if (ieee(4, 8, 23, 127)) return "float32";
    if (ieee(2, 5, 10, 15)) return "float16";
    if (ieee(2, 8, 7, 127)) return "bfloat16";
    if (precision == 80 && offset == 0 && spos == 79 && epos == 64 && esize == 15 && mpos == 0 &&
        msize == 64 && bias == 16383 && norm == H5T_NORM_NONE)
        return "long double (x87 80-bit)";
    return "float (" + std::to_string(size) + " bytes: " + std::to_string(esize) + "-bit exponent, " +
           std::to_string(msize) + "-bit mantissa)";
}

// Enum values as little-endian unsigned numbers; a big-endian enum becomes a little-endian one
// with the same names (HDF5 converts enums by name).
Result<Draft> enumDraft(hid_t t)
{
    TypeHandle base(H5Tget_super(t));
    if (!base) return Error{"enum without a base type: " + hdf5ErrorText(), ErrorCode::Format};
    const size_t size = H5Tget_size(base.get());
    if (size > 8) return Error{"enum over a " + std::to_string(size) + "-byte integer", ErrorCode::Format};
    const bool bigEndian = H5Tget_order(base.get()) == H5T_ORDER_BE;
    const bool isSigned = H5Tget_sign(base.get()) == H5T_SGN_2;
    TypeHandle memoryBase = littleEndian(base.get());
    TypeHandle memory(memoryBase ? H5Tenum_create(memoryBase.get()) : H5I_INVALID_HID);
    if (!memory) return Error{"cannot make a memory type: " + hdf5ErrorText(), ErrorCode::Io};
    RecordField field;
    field.kind = RecordValueKind::Enum;
    field.size = unsigned(size);
    const int members = H5Tget_nmembers(t);
    if (members < 0) return Error{"unreadable enum: " + hdf5ErrorText(), ErrorCode::Format};
    std::string names;
    for (int i = 0; i < members; ++i) {
        unsigned char value[8] = {0};
        char* name = H5Tget_member_name(t, unsigned(i));
        if (!name || H5Tget_member_value(t, unsigned(i), value) < 0) {
            if (name) H5free_memory(name);
            return Error{"unreadable enum member: " + hdf5ErrorText(), ErrorCode::Format};
        }
        if (bigEndian) std::reverse(value, value + size);
        const bool inserted = H5Tenum_insert(memory.get(), name, value) >= 0;
        uint64_t v = 0;
        for (size_t b = 0; b < size; ++b) v |= uint64_t(value[b]) << (8 * b);
        int64_t shown = int64_t(v);
        if (isSigned && size < 8 && (v >> (8 * size - 1)) != 0)
            shown = int64_t(v | (~uint64_t(0) << (8 * size)));
        if (i < 8)
            names += std::string(i ? ", " : "") + name + "=" +
                     (isSigned ? std::to_string(shown) : std::to_string(v));
        field.enumNames.emplace_back(v, name);
        H5free_memory(name);
        if (!inserted) return Error{"cannot make a memory type: " + hdf5ErrorText(), ErrorCode::Io};
    }
    if (members > 8) names += ", … (" + std::to_string(members) + " names)";
    field.type = "enum {" + names + "}";
    const std::string type = field.type;
    return atomic(t, std::move(field), type, std::move(memory), 0);
}

Result<Draft> stringDraft(hid_t t)
{
    RecordField field;
    field.kind = RecordValueKind::String;
    field.type = "string";
    Placement p;
    p.offsets = {0};
    Draft d;
    const htri_t variable = H5Tis_variable_str(t);
    if (variable < 0) return Error{"unreadable string type: " + hdf5ErrorText(), ErrorCode::Format};
    if (variable > 0) {
        d.memoryType = TypeHandle(H5Tcopy(H5T_C_S1));
        if (!d.memoryType || H5Tset_size(d.memoryType.get(), H5T_VARIABLE) < 0 ||
            H5Tset_cset(d.memoryType.get(), H5Tget_cset(t)) < 0)
            return Error{"cannot make a memory type: " + hdf5ErrorText(), ErrorCode::Io};
        d.variable = true;
        d.type = "string (variable length)";
    } else {
        d.memoryType = TypeHandle(H5Tcopy(t));
        if (!d.memoryType) return Error{"cannot make a memory type: " + hdf5ErrorText(), ErrorCode::Io};
        p.stringSize = unsigned(H5Tget_size(t));
        p.padding = H5Tget_strpad(t);
        d.type = "string (" + std::to_string(p.stringSize) + " bytes)";
    }
    d.memorySize = H5Tget_size(d.memoryType.get());
    d.fields.push_back(std::move(field));
    d.placements.push_back(std::move(p));
    return d;
}

Result<Draft> referenceDraft(hid_t t)
{
    Draft d;
    Placement p;
    p.offsets = {0};
    if (H5Tequal(t, H5T_STD_REF_OBJ) > 0) {
        d.memoryType = TypeHandle(H5Tcopy(H5T_STD_REF_OBJ));
        p.reference = H5R_OBJECT;
        d.type = "object reference";
    } else if (H5Tequal(t, H5T_STD_REF_DSETREG) > 0) {
        d.memoryType = TypeHandle(H5Tcopy(H5T_STD_REF_DSETREG));
        p.reference = H5R_DATASET_REGION;
        d.type = "dataset region reference";
    } else {
        return Error{"references of a kind this build of HDF5 does not read", ErrorCode::Format};
    }
    if (!d.memoryType) return Error{"cannot make a memory type: " + hdf5ErrorText(), ErrorCode::Io};
    d.memorySize = H5Tget_size(d.memoryType.get());
    RecordField field;
    field.kind = RecordValueKind::Reference;
    field.type = d.type;
    d.fields.push_back(std::move(field));
    d.placements.push_back(std::move(p));
    return d;
}

Result<Draft> sequenceDraft(hid_t t, int depth)
{
    TypeHandle base(H5Tget_super(t));
    if (!base) return Error{"sequence without an element type: " + hdf5ErrorText(), ErrorCode::Format};
    Result<Draft> element = build(base.get(), depth + 1);
    if (!element) return element.error();
    if (element->fields.size() != 1 || element->fields[0].count != 1 || !element->fields[0].fixed())
        return Error{"variable-length sequences of " + element->type, ErrorCode::Format};
    Draft d;
    d.memoryType = TypeHandle(H5Tvlen_create(element->memoryType.get()));
    if (!d.memoryType) return Error{"cannot make a memory type: " + hdf5ErrorText(), ErrorCode::Io};
    d.memorySize = H5Tget_size(d.memoryType.get());
    d.variable = true;
    d.type = "sequence of " + element->type;
    RecordField field;
    field.kind = RecordValueKind::Sequence;
    field.type = d.type;
    Placement p;
    p.offsets = {0};
    p.element = element->fields[0];
    p.elementSignificantOffset = element->placements[0].significantOffset;
    p.elementMemorySize = element->memorySize;
    d.fields.push_back(std::move(field));
    d.placements.push_back(std::move(p));
    return d;
}

Result<Draft> arrayDraft(hid_t t, int depth)
{
    const int rank = H5Tget_array_ndims(t);
    if (rank <= 0 || rank > H5S_MAX_RANK)
        return Error{"unreadable array type: " + hdf5ErrorText(), ErrorCode::Format};
    std::vector<hsize_t> dims(size_t(rank), 0);
    if (H5Tget_array_dims2(t, dims.data()) < 0)
        return Error{"unreadable array type: " + hdf5ErrorText(), ErrorCode::Format};
    TypeHandle base(H5Tget_super(t));
    if (!base) return Error{"array without an element type: " + hdf5ErrorText(), ErrorCode::Format};
    Result<Draft> element = build(base.get(), depth + 1);
    if (!element) return element.error();
    uint64_t n = 1;
    std::string extent;
    for (hsize_t dim : dims) {
        if (dim != 0 && n > kMaxValuesPerElement / dim)
            return Error{"array element type with too many values", ErrorCode::Format};
        n *= dim;
        extent += "[" + std::to_string(dim) + "]";
    }
    size_t values = 0;
    for (const Placement& p : element->placements) values += p.offsets.size();
    if (values != 0 && n > kMaxValuesPerElement / values)
        return Error{"array element type with too many values", ErrorCode::Format};
    Draft d;
    d.memoryType = TypeHandle(H5Tarray_create2(element->memoryType.get(), unsigned(rank), dims.data()));
    if (!d.memoryType) return Error{"cannot make a memory type: " + hdf5ErrorText(), ErrorCode::Io};
    d.memorySize = H5Tget_size(d.memoryType.get());
    d.variable = element->variable;
    d.type = element->type + extent;
    for (size_t f = 0; f < element->fields.size(); ++f) {
        RecordField field = element->fields[f];
        Placement p = element->placements[f];
        p.offsets.clear();
        for (uint64_t a = 0; a < n; ++a)
            for (size_t offset : element->placements[f].offsets)
                p.offsets.push_back(size_t(a) * element->memorySize + offset);
        field.count = p.offsets.size();
        d.fields.push_back(std::move(field));
        d.placements.push_back(std::move(p));
    }
    return d;
}

Result<Draft> compoundDraft(hid_t t, int depth)
{
    const int members = H5Tget_nmembers(t);
    if (members < 0) return Error{"unreadable compound type: " + hdf5ErrorText(), ErrorCode::Format};
    std::vector<std::string> names;
    std::vector<Draft> drafts;
    size_t size = 0;
    for (int i = 0; i < members; ++i) {
        char* name = H5Tget_member_name(t, unsigned(i));
        if (!name) return Error{"unreadable compound member: " + hdf5ErrorText(), ErrorCode::Format};
        names.emplace_back(name);
        H5free_memory(name);
        TypeHandle memberType(H5Tget_member_type(t, unsigned(i)));
        if (!memberType)
            return Error{"unreadable compound member '" + names.back() + "': " + hdf5ErrorText(),
                         ErrorCode::Format};
        Result<Draft> member = build(memberType.get(), depth + 1);
        if (!member) return Error{"member '" + names.back() + "': " + member.message(), ErrorCode::Format};
        size += member->memorySize;
        drafts.push_back(std::move(member).value());
    }
    Draft d;
    d.memoryType = TypeHandle(H5Tcreate(H5T_COMPOUND, std::max<size_t>(size, 1)));
    if (!d.memoryType) return Error{"cannot make a memory type: " + hdf5ErrorText(), ErrorCode::Io};
    d.memorySize = std::max<size_t>(size, 1);
    std::string type;
    size_t offset = 0;
    for (size_t i = 0; i < drafts.size(); ++i) {
        Draft& member = drafts[i];
        if (H5Tinsert(d.memoryType.get(), names[i].c_str(), offset, member.memoryType.get()) < 0)
            return Error{"cannot make a memory type: " + hdf5ErrorText(), ErrorCode::Io};
        type += (i ? ", " : "") + names[i] + ": " + member.type;
        d.variable = d.variable || member.variable;
        for (size_t f = 0; f < member.fields.size(); ++f) {
            RecordField field = std::move(member.fields[f]);
            field.name = field.name.empty() ? names[i] : names[i] + "." + field.name;
            Placement p = std::move(member.placements[f]);
            for (size_t& o : p.offsets) o += offset;
            d.fields.push_back(std::move(field));
            d.placements.push_back(std::move(p));
        }
        offset += member.memorySize;
    }
    d.type = "compound {" + type + "}";
    return d;
}

Result<Draft> build(hid_t t, int depth)
{
    if (depth > kMaxNesting)
        return Error{"element type nested deeper than " + std::to_string(kMaxNesting) + " levels",
                     ErrorCode::Format};
    const H5T_class_t cls = H5Tget_class(t);
    const size_t size = H5Tget_size(t);
    if (size == 0) return Error{"element type of size 0", ErrorCode::Format};
    const H5T_order_t order = H5Tget_order(t);
    unsigned first = 0, count = 0;
    switch (cls) {
        case H5T_INTEGER: {
            if (order != H5T_ORDER_LE && order != H5T_ORDER_BE)
                return Error{"integer type of unknown byte order", ErrorCode::Format};
            significantBytes(t, &first, &count);
            const bool isSigned = H5Tget_sign(t) == H5T_SGN_2;
            RecordField field;
            field.kind = isSigned ? RecordValueKind::Int : RecordValueKind::UInt;
            field.type = integerName(t, isSigned);
            field.size = count;
            const std::string type = field.type;
            return atomic(t, std::move(field), type, littleEndian(t), first);
        }
        case H5T_FLOAT: {
            if (order != H5T_ORDER_LE && order != H5T_ORDER_BE)
                return Error{"floating-point type of unknown byte order", ErrorCode::Format};
            significantBytes(t, &first, &count);
            RecordField field;
            field.kind = RecordValueKind::Float;
            field.type = floatName(t);
            field.size = count;
            field.floatBits = unsigned(H5Tget_precision(t));
            const std::string type = field.type;
            return atomic(t, std::move(field), type, littleEndian(t), first);
        }
        case H5T_BITFIELD: {
            significantBytes(t, &first, &count);
            RecordField field;
            field.kind = RecordValueKind::Bitfield;
            field.type = "bitfield (" + std::to_string(H5Tget_precision(t)) + " bits)";
            field.size = count;
            const std::string type = field.type;
            return atomic(t, std::move(field), type, littleEndian(t), first);
        }
        case H5T_OPAQUE: {
            char* tag = H5Tget_tag(t);
            const std::string tagText = tag ? tag : "";
            if (tag) H5free_memory(tag);
            RecordField field;
            field.kind = RecordValueKind::Opaque;
            field.type = "opaque (" + std::to_string(size) + " bytes" +
                         (tagText.empty() ? "" : ", tag '" + tagText + "'") + ")";
            field.size = unsigned(size);
            const std::string type = field.type;
            return atomic(t, std::move(field), type, TypeHandle(H5Tcopy(t)), 0);
        }
        case H5T_ENUM:
            return enumDraft(t);
        case H5T_STRING:
            return stringDraft(t);
        case H5T_REFERENCE:
            return referenceDraft(t);
        case H5T_VLEN:
            return sequenceDraft(t, depth);
        case H5T_ARRAY:
            return arrayDraft(t, depth);
        case H5T_COMPOUND:
            return compoundDraft(t, depth);
        case H5T_TIME:
            return Error{"HDF5 time type (no library reads it)", ErrorCode::Format};
        default:
            return Error{"element type of HDF5 class " + std::to_string(int(cls)), ErrorCode::Format};
    }
}

std::string fixedStringText(const char* s, unsigned size, H5T_str_t padding)
{
    size_t n = size;
    if (padding == H5T_STR_SPACEPAD) {
        while (n > 0 && s[n - 1] == ' ') --n;
    } else {
        n = strnlen(s, size);
    }
    return std::string(s, n);
}

std::string objectName(hid_t dataset, H5R_type_t kind, const void* ref)
{
    const ssize_t length = H5Rget_name(dataset, kind, ref, nullptr, 0);
    if (length <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return "(unresolved)";
    }
    std::string name(size_t(length) + 1, '\0');
    H5Rget_name(dataset, kind, ref, name.data(), name.size());
    name.resize(size_t(length));
    return name;
}

// "[start..end] of N" per dimension for hyperslabs and point lists; the exact blocks or points
// where there are at most 64.
std::string selectionText(hid_t space)
{
    const int rank = H5Sget_simple_extent_ndims(space);
    if (rank < 0) return "(unreadable selection)";
    const hssize_t points = H5Sget_select_npoints(space);
    std::string out = std::to_string(points) + " element(s)";
    auto coordinates = [rank](const hsize_t* c) {
        std::string s = "(";
        for (int i = 0; i < rank; ++i) s += (i ? "," : "") + std::to_string(c[i]);
        return s + ")";
    };
    const H5S_sel_type type = H5Sget_select_type(space);
    if (type == H5S_SEL_HYPERSLABS) {
        const hssize_t blocks = H5Sget_select_hyper_nblocks(space);
        if (blocks > 0 && blocks <= 64) {
            std::vector<hsize_t> list(size_t(blocks) * 2 * size_t(rank));
            if (H5Sget_select_hyper_blocklist(space, 0, hsize_t(blocks), list.data()) >= 0) {
                out += " in blocks";
                for (hssize_t b = 0; b < blocks; ++b)
                    out += " " + coordinates(&list[size_t(b) * 2 * size_t(rank)]) + "-" +
                           coordinates(&list[size_t(b) * 2 * size_t(rank) + size_t(rank)]);
                return out;
            }
        }
    } else if (type == H5S_SEL_POINTS) {
        const hssize_t n = H5Sget_select_elem_npoints(space);
        if (n > 0 && n <= 64) {
            std::vector<hsize_t> list(size_t(n) * size_t(rank));
            if (H5Sget_select_elem_pointlist(space, 0, hsize_t(n), list.data()) >= 0) {
                out += " at";
                for (hssize_t p = 0; p < n; ++p) out += " " + coordinates(&list[size_t(p) * size_t(rank)]);
                return out;
            }
        }
    }
    std::vector<hsize_t> start(size_t(std::max(rank, 1))), end(size_t(std::max(rank, 1)));
    if (rank > 0 && H5Sget_select_bounds(space, start.data(), end.data()) >= 0)
        out += " within " + coordinates(start.data()) + "-" + coordinates(end.data());
    H5Eclear2(H5E_DEFAULT);
    return out;
}

std::string referenceText(hid_t dataset, H5R_type_t kind, const unsigned char* ref, size_t size)
{
    if (std::all_of(ref, ref + size, [](unsigned char b) { return b == 0; })) return "(null)";
    std::string text = objectName(dataset, kind, ref);
    if (kind == H5R_DATASET_REGION) {
        SpaceHandle region(H5Rget_region(dataset, H5R_DATASET_REGION, ref));
        text += region ? " " + selectionText(region.get()) : " (unreadable region)";
        H5Eclear2(H5E_DEFAULT);
    }
    return text;
}

std::string sequenceText(const Placement& p, const hvl_t& v)
{
    std::string out = "[";
    RecordColumn one;
    const RecordField& f = p.element;
    const auto* data = static_cast<const unsigned char*>(v.p);
    for (size_t i = 0; i < v.len && data != nullptr; ++i) {
        one.bytes.assign(
            reinterpret_cast<const char*>(data + i * p.elementMemorySize + p.elementSignificantOffset),
            f.size);
        out += (i ? ", " : "") + recordValueText(f, one, 0);
    }
    return out + "]";
}

}  // namespace

Result<RecordLayout> recordLayout(hid_t fileType)
{
    Hdf5Lock lock;
    Result<Draft> d = build(fileType, 0);
    H5Eclear2(H5E_DEFAULT);
    if (!d) return d.error();
    RecordLayout layout;
    layout.type = std::move(d->type);
    layout.fields = std::move(d->fields);
    layout.placements = std::move(d->placements);
    layout.memoryType = std::move(d->memoryType);
    layout.memorySize = d->memorySize;
    layout.holdsVariableData = d->variable;
    for (size_t f = 0; f < layout.fields.size(); ++f)
        layout.fields[f].count = layout.placements[f].offsets.size();
    return layout;
}

Status readRecordElements(hid_t dataset, const RecordLayout& layout, const std::vector<uint64_t>& shape,
                          uint64_t first, uint64_t count, RecordBlock* out)
{
    Hdf5Lock lock;
    out->columns.assign(layout.fields.size(), RecordColumn{});
    if (count == 0) return Status::success();
    std::vector<unsigned char> buffer(size_t(count) * layout.memorySize, 0);
    const hsize_t n = count;
    SpaceHandle memorySpace(H5Screate_simple(1, &n, nullptr));
    if (!memorySpace) return Error{"cannot make a dataspace: " + hdf5ErrorText(), ErrorCode::Io};
    if (shape.empty()) {
        if (H5Dread(dataset, layout.memoryType.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()) < 0)
            return Error{"cannot read: " + hdf5ErrorText(), ErrorCode::Io};
    } else {
        SpaceHandle fileSpace(H5Dget_space(dataset));
        if (!fileSpace || !selectBoxes(fileSpace.get(), flatRangeBoxes(shape, first, count)))
            return Error{"cannot select elements: " + hdf5ErrorText(), ErrorCode::Io};
        if (H5Dread(dataset, layout.memoryType.get(), memorySpace.get(), fileSpace.get(), H5P_DEFAULT,
                    buffer.data()) < 0)
            return Error{"cannot read elements " + std::to_string(first) + ".." +
                             std::to_string(first + count - 1) + ": " + hdf5ErrorText(),
                         ErrorCode::Io};
    }
    for (size_t f = 0; f < layout.fields.size(); ++f) {
        const RecordField& field = layout.fields[f];
        const Placement& p = layout.placements[f];
        RecordColumn& column = out->columns[f];
        if (field.fixed())
            column.bytes.resize(size_t(count * field.count) * field.size);
        else
            column.text.reserve(size_t(count * field.count));
        for (uint64_t e = 0; e < count; ++e) {
            const unsigned char* element = buffer.data() + e * layout.memorySize;
            for (size_t k = 0; k < p.offsets.size(); ++k) {
                const unsigned char* value = element + p.offsets[k];
                if (field.fixed()) {
                    std::memcpy(column.bytes.data() + (e * field.count + k) * field.size,
                                value + p.significantOffset, field.size);
                    continue;
                }
                switch (field.kind) {
                    case RecordValueKind::String: {
                        if (p.stringSize != 0) {
                            column.text.push_back(fixedStringText(reinterpret_cast<const char*>(value),
                                                                  p.stringSize, p.padding));
                        } else {
                            const char* s = nullptr;
                            std::memcpy(&s, value, sizeof s);
                            column.text.emplace_back(s ? s : "");
                        }
                        break;
                    }
                    case RecordValueKind::Reference:
                        column.text.push_back(referenceText(
                            dataset, p.reference, value,
                            p.reference == H5R_OBJECT ? sizeof(hobj_ref_t) : sizeof(hdset_reg_ref_t)));
                        break;
                    case RecordValueKind::Sequence: {
                        hvl_t v{};
                        std::memcpy(&v, value, sizeof v);
                        column.text.push_back(sequenceText(p, v));
                        break;
                    }
                    default:
                        column.text.emplace_back();
                }
            }
        }
    }
    if (layout.holdsVariableData)
        H5Dvlen_reclaim(layout.memoryType.get(), memorySpace.get(), H5P_DEFAULT, buffer.data());
    H5Eclear2(H5E_DEFAULT);
    return Status::success();
}

}  // namespace faultline::hdf5
