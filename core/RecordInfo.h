#pragma once
// What a file says about a dataset that is not a tensor (docs/formats.md, "Not tensors"): tables
// of records (compound types, member by member), strings, enums, opaque blobs, bitfields,
// references, variable-length sequences, floats of other layouts (long double), null dataspaces,
// and links that lead nowhere. `compare` compares them value by value for equality; the ones it
// cannot compare say why.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace faultline {

// How the values of one field are held and compared.
enum class RecordValueKind {
    Int,        // little-endian two's complement, `size` bytes
    UInt,       // little-endian, `size` bytes
    Float,      // little-endian IEEE-style float, `size` significant bytes (padding dropped)
    Enum,       // the little-endian integer value (`size` bytes), shown by its name
    Opaque,     // `size` raw bytes
    Bitfield,   // `size` little-endian bytes
    String,     // text (fixed-length strings without their padding)
    Reference,  // text: the path of the object referred to (and the region, for region references)
    Sequence,   // text: a variable-length sequence, "[v0, v1, ...]"
};

// One field of a record element: a compound member (nested members joined by '.'), or the
// element itself ("" for a dataset of strings, enums, ...). An array member is one field of
// `count` values per element.
struct RecordField {
    std::string name;
    // "int64", "float32", "float16", "long double (x87 80-bit)", "string", "enum {A=0, B=1}", ...:
    // Float values are written out for float16/32/64 and x87 long doubles, else shown as bits.
    std::string type;
    RecordValueKind kind = RecordValueKind::Opaque;
    unsigned size = 0;       // bytes per value for the fixed kinds (Int ... Bitfield); 0 for text kinds
    unsigned floatBits = 0;  // Float: significant bits (16, 32, 64, 80, ...)
    uint64_t count = 1;      // values per element
    // Enum: the value's little-endian bytes read as an unsigned number -> its name.
    std::vector<std::pair<uint64_t, std::string>> enumNames;

    bool fixed() const { return size != 0; }
    bool operator==(const RecordField&) const = default;
};

struct RecordInfo {
    std::string name;             // path inside the file without a leading '/', as TensorInfo::name
    std::string type;             // the element type in words: "compound {step: int64, loss: float64}"
    std::vector<uint64_t> shape;  // row-major; empty = scalar (or a null dataspace)
    bool nullSpace = false;       // a null dataspace (h5py.Empty): no elements, not even one
    std::vector<RecordField> fields;
    // Why it cannot be compared ("" when it can): a type this reader cannot compare, a link that
    // leads nowhere, ...
    std::string notComparable;

    uint64_t elementCount() const
    {
        if (nullSpace) return 0;
        uint64_t n = 1;
        for (uint64_t d : shape) n *= d;
        return n;
    }
    // Values per element: the sum of the fields' counts.
    uint64_t valuesPerElement() const
    {
        uint64_t n = 0;
        for (const RecordField& f : fields) n += f.count;
        return n;
    }
};

// The values of one field for a run of elements: element e's value k is at e * count + k.
struct RecordColumn {
    std::string bytes;              // fixed kinds: packed values of field.size bytes
    std::vector<std::string> text;  // text kinds

    bool equal(const RecordField& field, uint64_t i, const RecordColumn& other) const;
};

// Elements [first, first + count) of a record dataset, one column per field.
struct RecordBlock {
    std::vector<RecordColumn> columns;
};

// Value i of a column as a person reads it: decimal integers, shortest round-trip floats (NaN
// with its bits), enum names, hex for opaque and bitfields, quoted strings.
std::string recordValueText(const RecordField& field, const RecordColumn& column, uint64_t i);

}  // namespace faultline
