#pragma once
// How HDF5 element types map to Faultline dtypes, both ways (see docs/formats.md, "Snapshot").
// Reading keeps bits exact: the memory type handed to H5Dread is the stored type itself, only
// switched to little-endian byte order, so HDF5 at most swaps bytes and never converts values.
#include <hdf5.h>

#include <optional>
#include <string>

#include "../DType.h"
#include "../Result.h"
#include "Hdf5Handles.h"

namespace faultline::hdf5 {

struct TypeConvention {
    DType dtype = DType::Float32;
    std::string storage;    // TensorInfo::storage, e.g. "hdf5-custom-float", "uint16+dtype"
    TypeHandle memoryType;  // little-endian elements of dtypeSize(dtype) bytes, bit-exact
};

// Classifies a dataset's stored type. `dtypeAttribute` is the dataset's "dtype" string attribute
// when it has one. An error says why the dataset is not a tensor (the caller skips it with a
// warning). `note` gets a message when the dtype attribute was present but not used.
Result<TypeConvention> classifyStoredType(hid_t fileType, const std::optional<std::string>& dtypeAttribute,
                                          std::string* note);

// The HDF5 type Faultline writes for `dtype` (also the memory type for writing: our data is
// little-endian already). bf16 → custom float (sign 15, exponent 7..14, mantissa 0..6, bias 127);
// fp8 → uint8; bool → h5py's enum {FALSE = 0, TRUE = 1} over int8.
TypeHandle writtenType(DType dtype);
// True when the written type alone does not say the dtype, so a "dtype" attribute is added
// (bf16 and the fp8 types).
bool writesDtypeAttribute(DType dtype);

// The bf16 custom float type in the given byte order.
TypeHandle bfloat16Type(H5T_order_t order = H5T_ORDER_LE);

}  // namespace faultline::hdf5
