#pragma once
// Reading and writing HDF5 attributes as AttrValue: scalar or 1-D integers (including h5py's
// boolean enum), floats and strings (fixed or variable length). Internal to core (includes
// hdf5.h). Errors carry no path: callers put "PATH: object 'x': attribute 'y': " in front.
#include <hdf5.h>

#include <optional>
#include <string>
#include <vector>

#include "../AttrValue.h"
#include "../Result.h"

namespace faultline::hdf5 {

// Upper bounds on what one attribute may make us allocate.
inline constexpr uint64_t kMaxAttributeElements = uint64_t(1) << 20;
inline constexpr uint64_t kMaxAttributeBytes = uint64_t(64) << 20;

// Names of the attributes of `obj`, in name order.
Result<std::vector<std::string>> attributeNames(hid_t obj);

// Reads attribute `name` of `obj`. Unsupported types (compound, reference, opaque, rank > 1,
// null dataspace) are errors saying what the attribute is.
Result<AttrValue> readAttribute(hid_t obj, const std::string& name);

// The attribute as text when it is a string (scalar, or a 1-element string array); nullopt when
// missing or not a string.
std::optional<std::string> readStringAttribute(hid_t obj, const std::string& name);

// Writes (or replaces) attribute `name`: int64 → 64-bit little-endian integer, double → IEEE
// float64, strings → variable-length UTF-8 (as h5py writes str), vectors → 1-D.
Status writeAttribute(hid_t obj, const std::string& name, const AttrValue& value);

}  // namespace faultline::hdf5
