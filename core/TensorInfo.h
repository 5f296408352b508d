#pragma once
// What a file says about one tensor, before any of its data is read.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "DType.h"

namespace faultline {

struct TensorInfo {
    std::string name;              // path inside the file without a leading '/', e.g. "layers/0/w"
    DType dtype = DType::Float32;  // logical element type (bf16 even when stored as uint16)
    std::vector<uint64_t> shape;   // row-major (C order); empty = scalar
    std::string kind;              // weight | grad | activation | optimizer | "" (unknown)
    std::string storage;           // how the file stores it, e.g. "float", "hdf5-custom-float",
                                   // "uint16+dtype", "opaque2", "uint8+dtype", "safetensors"
    std::map<std::string, std::string> attributes;  // other string/number attributes, as text

    uint64_t elementCount() const
    {
        uint64_t n = 1;
        for (uint64_t d : shape) n *= d;
        return n;
    }
    uint64_t byteCount() const { return elementCount() * dtypeSize(dtype); }
};

// "[4096, 4096]" / "[]"
std::string shapeToString(const std::vector<uint64_t>& shape);

}  // namespace faultline
