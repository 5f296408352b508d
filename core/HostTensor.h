#pragma once
// A tensor held in host memory: dtype, shape and little-endian bytes. The unit the golden model,
// simulated targets and replay pass around (trace op inputs and outputs are small enough).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "DType.h"

namespace faultline {

struct HostTensor {
    DType dtype = DType::Float32;
    std::vector<uint64_t> shape;
    std::vector<std::byte> data;  // elementCount() * dtypeSize(dtype) bytes

    HostTensor() = default;
    HostTensor(DType t, std::vector<uint64_t> s) : dtype(t), shape(std::move(s))
    {
        data.resize(size_t(elementCount()) * dtypeSize(dtype));
    }

    uint64_t elementCount() const
    {
        uint64_t n = 1;
        for (uint64_t d : shape) n *= d;
        return n;
    }
    size_t byteCount() const { return data.size(); }
    template <class T>
    T* as()
    {
        return reinterpret_cast<T*>(data.data());
    }
    template <class T>
    const T* as() const
    {
        return reinterpret_cast<const T*>(data.data());
    }
};

// The raw bits of element `i` (little-endian, dtypeSize bytes, at most 8), and writing them.
inline uint64_t elementBits(const HostTensor& t, uint64_t i)
{
    uint64_t v = 0;
    const unsigned s = dtypeSize(t.dtype);
    std::memcpy(&v, t.data.data() + i * s, s);
    return v;
}

inline void setElementBits(HostTensor& t, uint64_t i, uint64_t v)
{
    const unsigned s = dtypeSize(t.dtype);
    std::memcpy(t.data.data() + i * s, &v, s);
}

}  // namespace faultline
