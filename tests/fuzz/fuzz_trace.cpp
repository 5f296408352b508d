// Structure-aware libFuzzer target for the trace reader. The input bytes do not form the file:
// they drive SnapshotWriter to build a small trace-like HDF5 file (format/version attributes of
// any type, devices, tensors of random dtypes and odd or huge shapes with chunked storage and
// nothing written, op groups with random names, op names, inputs that may be missing and
// attributes of random types, outputs under random labels). readTrace and openTensorFile then
// open it and every tensor is read in bounded chunks. Byte-level fuzzing of HDF5's own parser is
// libhdf5's job (docs/formats.md, "Security").
//
// Besides the sanitizers, it aborts when an accepted trace breaks a promise: ops out of order, an
// input that is not a listed tensor, an output that cannot be found, a read that fails on a
// range inside the tensor, or a read outside it that succeeds.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "core/TensorFile.h"
#include "core/golden/CollectiveGolden.h"
#include "core/io/SnapshotWriter.h"
#include "core/replay/CollectiveInvariants.h"
#include "core/trace/Trace.h"
#include "core/trace/TraceOps.h"

using namespace faultline;

namespace {

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_trace: invariant broken: %s\n", what);
        std::abort();
    }
}

const std::string& scratchPath()
{
    static const std::string path = [] {
        const char* dir = std::getenv("TMPDIR");
        return std::string(dir && *dir ? dir : "/tmp") + "/fuzz_trace." + std::to_string(::getpid()) + ".h5";
    }();
    return path;
}

// True in `tenths` of ten cases (modulo-based, so runs of 0x00 or 0xff bytes still vary).
bool chance(FuzzedDataProvider& in, int tenths)
{
    return in.ConsumeIntegralInRange(0, 9) < tenths;
}

std::string smallName(FuzzedDataProvider& in)
{
    static const char* const kNames[] = {"a",      "b",      "x",     "gpu0", "gpu1",    "op",
                                         "inputs", "name",   "phase", "eps",  "trans_a", "alpha",
                                         "scale",  "causal", "ranks", "0",    "000001",  "7"};
    if (in.ConsumeBool()) return kNames[in.ConsumeIntegralInRange<size_t>(0, std::size(kNames) - 1)];
    return in.ConsumeRandomLengthString(12);
}

AttrValue randomValue(FuzzedDataProvider& in, std::vector<std::string> pool)
{
    switch (in.ConsumeIntegralInRange(0, 5)) {
        case 0:
            return in.ConsumeIntegral<int64_t>();
        case 1:
            return in.ConsumeFloatingPoint<double>();
        case 2:
            return smallName(in);
        case 3: {
            std::vector<int64_t> v(in.ConsumeIntegralInRange<size_t>(0, 4));
            for (auto& x : v) x = in.ConsumeIntegral<int64_t>();
            return v;
        }
        case 4: {
            std::vector<double> v(in.ConsumeIntegralInRange<size_t>(0, 4));
            for (auto& x : v) x = in.ConsumeFloatingPoint<double>();
            return v;
        }
        default: {
            pool.push_back(smallName(in));
            std::vector<std::string> v(in.ConsumeIntegralInRange<size_t>(0, 4));
            for (auto& x : v) x = pool[in.ConsumeIntegralInRange<size_t>(0, pool.size() - 1)];
            return v;
        }
    }
}

std::vector<uint64_t> randomShape(FuzzedDataProvider& in, bool* huge)
{
    std::vector<uint64_t> shape(in.ConsumeIntegralInRange<size_t>(0, 4));
    *huge = chance(in, 2);
    for (auto& d : shape)
        d = *huge ? (uint64_t(1) << in.ConsumeIntegralInRange(0, 21))
                  : in.ConsumeIntegralInRange<uint64_t>(0, 6);
    return shape;
}

// A tensor at `name`: small ones filled from the input, huge ones declared with chunked storage
// and nothing written.
void writeTensor(FuzzedDataProvider& in, SnapshotWriter& w, const std::string& name)
{
    const DType dtype = kAllDTypes[in.ConsumeIntegralInRange<size_t>(0, std::size(kAllDTypes) - 1)];
    bool huge = false;
    const std::vector<uint64_t> shape = randomShape(in, &huge);
    TensorWriteOptions options;
    if (in.ConsumeBool()) options.kind = smallName(in);
    if (in.ConsumeBool()) options.attributes[smallName(in)] = randomValue(in, {});
    if (!shape.empty() && in.ConsumeBool()) {
        for (uint64_t d : shape)
            options.chunkShape.push_back(
                d == 0 ? 1 : in.ConsumeIntegralInRange<uint64_t>(1, std::min<uint64_t>(d, 8)));
        options.gzipLevel = in.ConsumeIntegralInRange(0, 9);
    }
    if (!w.beginTensor(name, dtype, shape, options).ok()) return;
    if (!huge) {
        uint64_t n = 1;
        for (uint64_t d : shape) n *= d;
        // A few bytes of real data; the rest zeros, so the input mostly drives structure.
        std::vector<uint8_t> bytes = in.ConsumeBytes<uint8_t>(std::min<uint64_t>(n * dtypeSize(dtype), 32));
        bytes.resize(n * dtypeSize(dtype));
        w.writeElements(0, n, bytes.data());
    } else if (in.ConsumeBool()) {
        const uint8_t some[64] = {1, 2, 3};
        w.writeElements(0, 64 / dtypeSize(dtype), some);
    }
    w.endTensor();
}

void buildFile(FuzzedDataProvider& in)
{
    Result<SnapshotWriter> created = SnapshotWriter::create(scratchPath());
    check(created.ok(), "create scratch file");
    SnapshotWriter& w = *created;

    if (chance(in, 9))
        w.setRootAttribute("faultline_format",
                           chance(in, 9) ? AttrValue(std::string("trace")) : randomValue(in, {}));
    if (chance(in, 9))
        w.setRootAttribute("faultline_version", chance(in, 8) ? AttrValue(int64_t(1)) : randomValue(in, {}));
    if (in.ConsumeBool()) w.setRootAttribute(smallName(in), randomValue(in, {}));

    std::vector<std::string> labels;
    for (size_t i = in.ConsumeIntegralInRange<size_t>(0, 3); i > 0; --i) {
        const std::string label = smallName(in);
        labels.push_back(label);
        w.createGroup("devices/" + label);
        for (const char* key : {"name", "uuid", "role"})
            if (in.ConsumeBool()) w.setGroupAttribute("devices/" + label, key, randomValue(in, {}));
    }
    std::vector<std::string> ids;
    for (size_t i = in.ConsumeIntegralInRange<size_t>(0, 4); i > 0; --i) {
        const std::string id = smallName(in);
        ids.push_back(id);
        writeTensor(in, w, "tensors/" + id);
    }
    static const char* const kOps[] = {
        "gemm",      "layernorm",  "rmsnorm",    "softmax",   "gelu",           "silu",       "add",
        "attention", "all_reduce", "all_gather", "broadcast", "reduce_scatter", "fused_magic"};
    for (size_t i = in.ConsumeIntegralInRange<size_t>(0, 5); i > 0; --i) {
        char number[16];
        std::snprintf(number, sizeof number, "%06u", in.ConsumeIntegralInRange(0u, 999999u));
        const std::string group = "ops/" + (chance(in, 9) ? std::string(number) : smallName(in));
        w.createGroup(group);
        if (chance(in, 9))
            w.setGroupAttribute(
                group, "op",
                chance(in, 8)
                    ? AttrValue(std::string(kOps[in.ConsumeIntegralInRange<size_t>(0, std::size(kOps) - 1)]))
                    : randomValue(in, {}));
        if (chance(in, 9)) {
            std::vector<std::string> inputs(in.ConsumeIntegralInRange<size_t>(0, 3));
            for (auto& x : inputs)
                x = ids.empty() ? smallName(in) : ids[in.ConsumeIntegralInRange<size_t>(0, ids.size() - 1)];
            w.setGroupAttribute(group, "inputs", chance(in, 8) ? AttrValue(inputs) : randomValue(in, ids));
        }
        for (size_t a = in.ConsumeIntegralInRange<size_t>(0, 3); a > 0; --a)
            w.setGroupAttribute(group, smallName(in), randomValue(in, ids));
        for (size_t o = in.ConsumeIntegralInRange<size_t>(0, 2); o > 0; --o) {
            std::string label = labels.empty() || in.ConsumeBool()
                                    ? smallName(in)
                                    : labels[in.ConsumeIntegralInRange<size_t>(0, labels.size() - 1)];
            const std::string k =
                chance(in, 9) ? std::to_string(in.ConsumeIntegralInRange(0, 3)) : smallName(in);
            writeTensor(in, w, group + "/outputs/" + label + "/" + k);
        }
    }
    check(w.close().ok(), "close scratch file");
}

// Reads every tensor in bounded pieces: the first two and the last chunk of at most 4096
// elements, plus one read just past the end that must fail. Where the file hands a piece out in
// place (TensorFile::runs), the runs must cover it in order and hold the bytes read() gives.
void readEverything(const TensorFile& file)
{
    std::vector<uint8_t> buffer;
    for (size_t i = 0; i < file.tensors().size(); ++i) {
        const TensorInfo& t = file.tensors()[i];
        const uint64_t n = t.elementCount();
        const uint64_t chunk = std::min<uint64_t>(n, 4096);
        const size_t size = dtypeSize(t.dtype);
        buffer.resize(std::max<uint64_t>(chunk, 1) * size);
        for (uint64_t first : {uint64_t(0), chunk, n > chunk ? n - chunk : 0}) {
            const uint64_t count = std::min(chunk, n - std::min(first, n));
            check(file.read(i, first, count, buffer.data()).ok(), "read inside a tensor failed");
            Result<TensorRuns> runs = file.runs(i, first, count);
            if (!runs || runs->runs.empty()) continue;
            uint64_t next = 0;
            for (const ElementRun& r : runs->runs) {
                check(r.offset == next && r.count > 0 && r.offset + r.count <= count, "runs out of order");
                check(std::memcmp(r.data, buffer.data() + r.offset * size, size_t(r.count) * size) == 0,
                      "a run differs from read()");
                next += r.count;
            }
            check(next == count, "runs do not cover the range");
        }
        check(!file.read(i, n, 1, buffer.data()).ok(), "read past the end succeeded");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    FuzzedDataProvider in(data, size);
    buildFile(in);

    Result<Trace> trace = readTrace(scratchPath());
    if (trace.ok()) {
        const Trace& t = *trace;
        std::set<std::string> ids(t.tensorIds.begin(), t.tensorIds.end());
        for (size_t i = 0; i < t.ops.size(); ++i) {
            check(i == 0 || t.ops[i - 1].index < t.ops[i].index, "ops out of order");
            for (const std::string& input : t.ops[i].inputs)
                check(ids.count(input) > 0, "input is not a tensor");
            for (const auto& [label, names] : t.ops[i].outputs)
                for (const std::string& name : names)
                    check(t.file->find(name).has_value(), "output is not a tensor");
            (void)isKnownTraceOp(t.ops[i].op);
            for (const auto& [key, value] : t.ops[i].params) (void)attrValueToString(value);
            // A collective's invariants read every rank's output: an answer or an error, never a crash.
            if (golden::isCollectiveOp(t.ops[i].op)) {
                auto invariants = checkCollectiveInvariants(t, t.ops[i]);
                check(invariants.ok() || !invariants.message().empty(), "invariant error without a message");
            }
        }
        readEverything(*t.file);
    } else {
        check(trace.message().rfind(scratchPath() + ": ", 0) == 0, "error does not name the file");
    }

    Result<std::unique_ptr<TensorFile>> file = openTensorFile(scratchPath());
    if (file.ok()) readEverything(**file);
    ::unlink(scratchPath().c_str());
    return 0;
}
