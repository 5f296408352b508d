// libFuzzer target for the safetensors reader: each input is a whole file. It is parsed from
// memory (parseSafetensorsBytes) and, written to a scratch file, through looksLikeSafetensors and
// openSafetensors; every tensor is then read whole, in chunks and out of range. Besides the
// sanitizers, it aborts when the two paths disagree or an accepted layout breaks its promises.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/io/SafetensorsFile.h"

using namespace faultline;

namespace {

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_safetensors: invariant broken: %s\n", what);
        std::abort();
    }
}

// One scratch file per fuzzing process, in $TMPDIR (scripts/run-fuzzers points it at its
// scratch directory), removed at exit.
const std::string& scratchPath()
{
    static const std::string path = [] {
        const char* dir = std::getenv("TMPDIR");
        std::string p = std::string(dir && *dir ? dir : "/tmp") + "/fuzz_safetensors.XXXXXX";
        const int fd = ::mkstemp(p.data());
        check(fd >= 0, "mkstemp");
        ::close(fd);
        static std::string forExit = p;
        std::atexit([] { ::unlink(forExit.c_str()); });
        return p;
    }();
    return path;
}

void writeScratch(const uint8_t* data, size_t size)
{
    const int fd = ::open(scratchPath().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    check(fd >= 0, "open scratch file");
    size_t done = 0;
    while (done < size) {
        const ssize_t w = ::write(fd, data + done, size - done);
        check(w > 0, "write scratch file");
        done += size_t(w);
    }
    ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string& path = scratchPath();

    // From memory: an accepted layout covers the buffer exactly, in offset order.
    auto layout = parseSafetensorsBytes(path, data, size);
    if (layout.ok()) {
        const SafetensorsLayout& l = *layout;
        check(l.dataStart() + l.bufferSize == size, "buffer ends at the end of the input");
        check(l.tensors.size() == l.dataBegin.size(), "one offset per tensor");
        uint64_t expected = 0;
        for (size_t i = 0; i < l.tensors.size(); ++i) {
            check(l.dataBegin[i] == expected, "tensors are contiguous from 0");
            expected += l.tensors[i].byteCount();
            check(expected <= l.bufferSize, "tensor inside the buffer");
        }
        check(expected == l.bufferSize, "tensors fill the buffer");
    } else {
        check(layout.message().rfind(path + ": ", 0) == 0, "error names the file");
        check(layout.message().find('\n') == std::string::npos, "one-line error");
    }

    // Through a file: the same verdict, the same bytes.
    writeScratch(data, size);
    const bool looks = looksLikeSafetensors(path);
    auto file = openSafetensors(path);
    check(file.ok() == layout.ok(), "file and memory parsers agree");
    if (!file.ok()) {
        check(file.message() == layout.message(), "file and memory errors agree");
        return 0;
    }
    check(looks || size < 10, "an accepted file looks like safetensors");
    const TensorFile& f = **file;
    const SafetensorsLayout& l = *layout;
    check(f.tensors().size() == l.tensors.size(), "same tensor count");
    std::vector<unsigned char> whole, piece;
    for (size_t i = 0; i < f.tensors().size(); ++i) {
        const TensorInfo& t = f.tensors()[i];
        check(t.name == l.tensors[i].name, "same order");
        const uint64_t n = t.elementCount();
        const uint64_t bytes = t.byteCount();
        const unsigned char* expected = data + l.dataStart() + l.dataBegin[i];
        whole.assign(size_t(bytes), 0);
        check(f.read(i, 0, n, whole.data()).ok(), "whole read");
        check(bytes == 0 || std::memcmp(whole.data(), expected, size_t(bytes)) == 0, "whole read bytes");
        // Two chunks, split in the middle.
        const uint64_t half = n / 2;
        const unsigned esize = dtypeSize(t.dtype);
        piece.assign(size_t((n - half) * esize) + 1, 0);
        check(f.read(i, 0, half, piece.data()).ok(), "first chunk");
        check(half == 0 || std::memcmp(piece.data(), expected, size_t(half * esize)) == 0,
              "first chunk bytes");
        check(f.read(i, half, n - half, piece.data()).ok(), "second chunk");
        check(
            n == half || std::memcmp(piece.data(), expected + half * esize, size_t((n - half) * esize)) == 0,
            "second chunk bytes");
        check(!f.read(i, n, 1, piece.data()).ok(), "read past the end fails");
        check(!f.read(i, 1, UINT64_MAX, piece.data()).ok(), "wrapping read fails");
    }
    check(!f.read(f.tensors().size(), 0, 0, nullptr).ok(), "bad index fails");
    return 0;
}
