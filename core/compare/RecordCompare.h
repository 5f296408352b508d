#pragma once
// Compares a dataset that is not a tensor (core/RecordInfo.h) in one file with its pair in the
// other, value by value for equality: counts per field, how many elements differ, and the first
// differences spelled out. Values are equal when their bits are (fixed kinds: integers, floats
// without padding, enum values, opaque bytes) or their text is (strings without padding, the
// paths references lead to, sequences).
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "../Result.h"
#include "../TensorFile.h"

namespace faultline {

struct RecordFieldCount {
    std::string name;  // "" for a dataset of atomic elements
    std::string type;
    uint64_t values = 0;      // elements × the field's values per element
    uint64_t mismatches = 0;  // values that differ
};

struct RecordDifference {
    uint64_t element = 0;  // flat row-major index
    std::string field;     // "" for a dataset of atomic elements
    uint64_t value = 0;    // which of the field's values in the element (array members)
    std::string suspect;   // as recordValueText spells it, control characters escaped
    std::string reference;
};

struct RecordDivergence {
    std::string name;  // the pairing key
    std::string suspectName, referenceName;
    std::string type;
    std::vector<uint64_t> shape;
    bool nullSpace = false;
    uint64_t elements = 0;
    uint64_t values = 0;              // elements × values per element
    uint64_t mismatches = 0;          // values that differ
    uint64_t mismatchedElements = 0;  // elements with at least one differing value
    std::vector<RecordFieldCount> fields;
    std::vector<RecordDifference> differences;  // the first ones, in element order
};

struct RecordCompareOptions {
    size_t shown = 16;                         // differences spelled out
    uint64_t blockValues = uint64_t(1) << 18;  // values read per block (memory bound)
    const std::atomic<bool>* cancel = nullptr;
};

// Compares record `suspectIndex` of `suspect` with record `referenceIndex` of `reference`, which
// must be comparable (recordsComparable in Pairing.h). Errors: read errors naming the file and
// dataset, cancellation (kCompareCancelled in TensorComparer.h).
Result<RecordDivergence> compareRecords(const TensorFile& suspect, size_t suspectIndex,
                                        const TensorFile& reference, size_t referenceIndex,
                                        const RecordCompareOptions& options = {});

}  // namespace faultline
