#pragma once
// A TensorFile over in-memory buffers: what tests, the simulated targets and the replay engine
// use when the tensors never touched a disk. Format: Snapshot.
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "../TensorFile.h"

namespace faultline {

class MemoryTensorFile : public TensorFile {
public:
    // `path` is only a label: it names the "file" in messages.
    explicit MemoryTensorFile(std::string path = "<memory>");

    // Adds a tensor holding `bytes` (elementCount * dtypeSize little-endian bytes, checked).
    // Errors: a name already present, a size that does not match dtype and shape.
    Status add(const std::string& name, DType dtype, std::vector<uint64_t> shape,
               std::vector<std::byte> bytes, std::map<std::string, std::string> attributes = {});
    // The same from a typed buffer (sizeof(T) must equal dtypeSize(dtype)).
    template <class T>
    Status addValues(const std::string& name, DType dtype, std::vector<uint64_t> shape,
                     const std::vector<T>& values, std::map<std::string, std::string> attributes = {})
    {
        if (sizeof(T) != dtypeSize(dtype))
            return fileError(m_path, name + ": element size " + std::to_string(sizeof(T)) +
                                         " does not match " + std::string(dtypeName(dtype)));
        std::vector<std::byte> bytes(values.size() * sizeof(T));
        if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
        return add(name, dtype, std::move(shape), std::move(bytes), std::move(attributes));
    }
    void setAttribute(const std::string& key, const std::string& value) { m_attributes[key] = value; }
    void addWarning(const std::string& warning) { m_warnings.push_back(warning); }
    // Makes every read of tensor `name` fail (to test that one bad tensor is not fatal).
    void failReadsOf(const std::string& name) { m_failing.insert(name); }

    const std::string& path() const override { return m_path; }
    FileFormat format() const override { return FileFormat::Snapshot; }
    const std::vector<TensorInfo>& tensors() const override { return m_infos; }
    const std::map<std::string, std::string>& attributes() const override { return m_attributes; }
    const std::vector<std::string>& warnings() const override { return m_warnings; }
    Status read(size_t index, uint64_t first, uint64_t count, void* dst) const override;

private:
    std::string m_path;
    std::vector<TensorInfo> m_infos;
    std::vector<std::vector<std::byte>> m_data;
    std::map<std::string, std::string> m_attributes;
    std::vector<std::string> m_warnings;
    std::set<std::string> m_failing;
};

}  // namespace faultline
