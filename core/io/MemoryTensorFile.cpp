#include "MemoryTensorFile.h"

#include <cstring>

namespace faultline {

MemoryTensorFile::MemoryTensorFile(std::string path) : m_path(std::move(path)) {}

Status MemoryTensorFile::add(const std::string& name, DType dtype, std::vector<uint64_t> shape,
                             std::vector<std::byte> bytes, std::map<std::string, std::string> attributes)
{
    const std::string key = (!name.empty() && name.front() == '/') ? name.substr(1) : name;
    if (find(key)) return fileError(m_path, key + ": a tensor of that name exists already");
    uint64_t n = 1;
    for (uint64_t d : shape) {
        if (d != 0 && n > UINT64_MAX / d)
            return fileError(m_path, key + ": shape " + shapeToString(shape) + " is too large");
        n *= d;
    }
    const unsigned size = dtypeSize(dtype);
    if (n > UINT64_MAX / size || n * size != bytes.size())
        return fileError(m_path, key + ": " + std::to_string(bytes.size()) + " bytes do not hold " +
                                     shapeToString(shape) + " elements of " + std::string(dtypeName(dtype)));
    TensorInfo info;
    info.name = key;
    info.dtype = dtype;
    info.shape = std::move(shape);
    info.storage = "memory";
    if (auto it = attributes.find("kind"); it != attributes.end()) info.kind = it->second;
    info.attributes = std::move(attributes);
    m_infos.push_back(std::move(info));
    m_data.push_back(std::move(bytes));
    return Status::success();
}

Status MemoryTensorFile::read(size_t index, uint64_t first, uint64_t count, void* dst) const
{
    if (index >= m_infos.size()) return fileError(m_path, "no tensor #" + std::to_string(index));
    const TensorInfo& info = m_infos[index];
    if (m_failing.count(info.name)) return fileError(m_path, info.name + ": read failed (simulated)");
    const uint64_t n = info.elementCount();
    if (first > n || count > n - first)
        return fileError(m_path, info.name + ": elements [" + std::to_string(first) + ", " +
                                     std::to_string(first + count) + ") out of range (" + std::to_string(n) +
                                     " elements)");
    const unsigned size = dtypeSize(info.dtype);
    if (count > 0) std::memcpy(dst, m_data[index].data() + first * size, size_t(count * size));
    return Status::success();
}

}  // namespace faultline
