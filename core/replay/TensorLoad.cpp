#include "TensorLoad.h"

#include <xxhash.h>

#include <cstdio>

namespace faultline {

Result<HostTensor> loadTensor(const TensorFile& file, const std::string& name)
{
    const auto index = file.find(name);
    if (!index) return fileError(file.path(), "no tensor '" + name + "'");
    const TensorInfo& info = file.tensors()[*index];
    if (info.byteCount() > kMaxReplayTensorBytes)
        return fileError(file.path(), "tensor '" + name + "' has " + std::to_string(info.byteCount()) +
                                          " bytes, more than replay holds in memory");
    HostTensor t(info.dtype, info.shape);
    const uint64_t n = info.elementCount();
    const uint64_t chunk = (uint64_t(64) << 20) / std::max(1u, dtypeSize(info.dtype));
    for (uint64_t first = 0; first < n; first += chunk) {
        const uint64_t count = std::min(chunk, n - first);
        Status st = file.read(*index, first, count, t.data.data() + first * dtypeSize(info.dtype));
        if (!st) return st.error();
    }
    return t;
}

Result<std::vector<HostTensor>> loadOpInputs(const Trace& trace, const TraceOp& op)
{
    if (!trace.file) return Error{"trace has no open file", ErrorCode::Failed};
    std::vector<HostTensor> inputs;
    for (const std::string& id : op.inputs) {
        auto t = loadTensor(*trace.file, "tensors/" + id);
        if (!t) return t.error();
        inputs.push_back(std::move(t).value());
    }
    return inputs;
}

std::string outputDigest(const std::vector<HostTensor>& outputs)
{
    XXH3_state_t* state = XXH3_createState();
    XXH3_128bits_reset(state);
    for (const HostTensor& t : outputs) {
        const uint64_t header[2] = {uint64_t(t.dtype), t.shape.size()};
        XXH3_128bits_update(state, header, sizeof header);
        XXH3_128bits_update(state, t.shape.data(), t.shape.size() * sizeof(uint64_t));
        XXH3_128bits_update(state, t.data.data(), t.data.size());
    }
    const XXH128_hash_t h = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                  static_cast<unsigned long long>(h.low64));
    return buf;
}

}  // namespace faultline
