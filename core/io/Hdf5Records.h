#pragma once
// Datasets that are not tensors, read value by value for comparison (core/RecordInfo.h): the
// fields of an HDF5 element type (compound members flattened, arrays as counts), the memory type
// they are read into (the stored types in little-endian order, strings as stored or as C
// strings, references and variable-length sequences as HDF5 hands them out), and the values of a
// run of elements as RecordColumns. Used inside core/io only.
#include <hdf5.h>

#include <string>
#include <vector>

#include "../RecordInfo.h"
#include "../Result.h"
#include "Hdf5Handles.h"

namespace faultline::hdf5 {

struct RecordLayout {
    std::string type;  // RecordInfo::type
    std::vector<RecordField> fields;
    TypeHandle memoryType;
    size_t memorySize = 0;           // bytes per element in memory
    bool holdsVariableData = false;  // vlen strings or sequences: HDF5 allocates, we reclaim
    // Per field: where each of its values starts in a memory element, and for sequences the
    // fields of their elements.
    struct Placement {
        std::vector<size_t> offsets;           // one per value (RecordField::count)
        unsigned significantOffset = 0;        // fixed kinds: first significant byte of a value
        H5T_str_t padding = H5T_STR_NULLTERM;  // fixed strings
        unsigned stringSize = 0;               // fixed strings: bytes; 0 = variable-length
        RecordField element;                   // sequences: their elements (a fixed kind)
        unsigned elementSignificantOffset = 0;
        size_t elementMemorySize = 0;
        H5R_type_t reference = H5R_BADTYPE;  // references: object or dataset region
    };
    std::vector<Placement> placements;
};

// The fields of elements of `fileType`, or an error saying why they cannot be compared (a time
// type, a sequence of compound elements, ...).
Result<RecordLayout> recordLayout(hid_t fileType);

// Reads elements [first, first + count) (row-major over `shape`) of `dataset` into `out`, one
// column per field. `dataset`'s file resolves references. Errors are HDF5's text.
Status readRecordElements(hid_t dataset, const RecordLayout& layout, const std::vector<uint64_t>& shape,
                          uint64_t first, uint64_t count, RecordBlock* out);

}  // namespace faultline::hdf5
