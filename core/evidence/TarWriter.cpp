#include "TarWriter.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "../io/SafeFiles.h"

namespace faultline {
namespace {

constexpr size_t kBlock = 512;
constexpr uint64_t kMaxSize = (uint64_t(1) << 33) - 1;  // 11 octal digits

void putOctal(char* field, size_t width, uint64_t value)
{
    // width-1 octal digits, zero-padded, then NUL (callers keep value within width-1 digits).
    for (size_t i = width - 1; i-- > 0;) {
        field[i] = char('0' + (value & 7));
        value >>= 3;
    }
    field[width - 1] = '\0';
}

// Whether anything is at `path`, a link (even a dangling one) included.
// Moves `from` to `to` unless something is at `to` (then EEXIST): renameat2's RENAME_NOREPLACE,
// else (a file system without it) a hard link and an unlink, which cannot replace either.
int moveWithoutReplacing(const std::string& from, const std::string& to)
{
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return errno;
    if (::link(from.c_str(), to.c_str()) != 0) return errno;
    ::unlink(from.c_str());
    return 0;
}

}  // namespace

Result<TarWriter> TarWriter::create(const std::string& path)
{
    if (pathOccupied(path))
        return fileError(path, "already exists (refusing to overwrite it)", ErrorCode::Usage);
    auto tmp = openTempBeside(path);
    if (!tmp) return tmp.error();
    std::FILE* f = ::fdopen(tmp->fd, "wb");
    if (!f) {
        const int e = errno;
        ::close(tmp->fd);
        ::unlink(tmp->path.c_str());
        return fileError(tmp->path, std::strerror(e), ErrorCode::Io);
    }
    return TarWriter(path, tmp->path, f);
}

TarWriter::TarWriter(TarWriter&& o) noexcept
    : m_path(std::move(o.m_path)), m_tmp(std::move(o.m_tmp)), m_file(o.m_file)
{
    o.m_file = nullptr;
}

TarWriter::~TarWriter()
{
    if (m_file) {
        std::fclose(m_file);
        ::unlink(m_tmp.c_str());
    }
}

Error TarWriter::error(const std::string& problem) const
{
    return fileError(m_path, problem);
}

Status TarWriter::writeBytes(const void* data, size_t size)
{
    if (size && std::fwrite(data, 1, size, m_file) != size)
        return error(std::string("write: ") + std::strerror(errno));
    return {};
}

Status TarWriter::writeHeader(const std::string& name, char type, uint64_t size, uint32_t mode, int64_t mtime)
{
    if (!m_file) return error("already closed");
    std::array<char, kBlock> h{};
    std::string prefix, base = name;
    if (base.size() > 100) {
        // Split at a '/' so that the prefix has at most 155 bytes and the rest at most 100.
        size_t cut = std::string::npos;
        for (size_t i = name.find('/'); i != std::string::npos; i = name.find('/', i + 1))
            if (i <= 155 && name.size() - i - 1 <= 100 && name.size() - i - 1 > 0) {
                cut = i;
                break;
            }
        if (cut == std::string::npos) return error("'" + name + "': name too long for a ustar header");
        prefix = name.substr(0, cut);
        base = name.substr(cut + 1);
    }
    if (size > kMaxSize) return error("'" + name + "': bigger than a ustar entry can hold (8 GiB)");
    std::memcpy(h.data(), base.data(), base.size());
    putOctal(h.data() + 100, 8, mode);
    putOctal(h.data() + 108, 8, 0);
    putOctal(h.data() + 116, 8, 0);
    putOctal(h.data() + 124, 12, size);
    putOctal(h.data() + 136, 12, uint64_t(mtime < 0 ? 0 : mtime));
    h[156] = type;
    std::memcpy(h.data() + 257, "ustar", 6);  // with its NUL
    std::memcpy(h.data() + 263, "00", 2);
    std::memcpy(h.data() + 345, prefix.data(), prefix.size());
    std::memset(h.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (char c : h) sum += static_cast<unsigned char>(c);
    putOctal(h.data() + 148, 7, sum);
    h[155] = ' ';
    return writeBytes(h.data(), h.size());
}

Status TarWriter::addDirectory(const std::string& name, int64_t mtime)
{
    return writeHeader(name + "/", '5', 0, 0755, mtime);
}

Status TarWriter::addFile(const std::string& name, const std::string& sourcePath, int64_t mtime)
{
    if (Status st = checkRegularInput(sourcePath); !st) return st;
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(sourcePath, ec);
    if (ec) return fileError(sourcePath, ec.message());
    std::FILE* in = std::fopen(sourcePath.c_str(), "rb");
    if (!in) return fileError(sourcePath, std::strerror(errno));
    Status st = writeHeader(name, '0', size, 0644, mtime);
    uint64_t copied = 0;
    std::string buf(1 << 16, '\0');
    while (st && copied < size) {
        const size_t want = size_t(std::min<uint64_t>(buf.size(), size - copied));
        const size_t n = std::fread(buf.data(), 1, want, in);
        if (n == 0) {
            st = fileError(sourcePath, "changed size while being archived");
            break;
        }
        st = writeBytes(buf.data(), n);
        copied += n;
    }
    std::fclose(in);
    if (!st) return st;
    const size_t pad = size_t((kBlock - size % kBlock) % kBlock);
    const std::array<char, kBlock> zeros{};
    return writeBytes(zeros.data(), pad);
}

Status TarWriter::close()
{
    if (!m_file) return error("already closed");
    const std::array<char, 2 * kBlock> zeros{};
    Status st = writeBytes(zeros.data(), zeros.size());
    if (st && std::fflush(m_file) != 0) st = error(std::strerror(errno));
    if (st && ::fsync(fileno(m_file)) != 0) st = error(std::strerror(errno));
    if (std::fclose(m_file) != 0 && st) st = error(std::strerror(errno));
    m_file = nullptr;
    if (!st) {
        ::unlink(m_tmp.c_str());
        return st;
    }
    if (const int e = moveWithoutReplacing(m_tmp, m_path); e != 0) {
        ::unlink(m_tmp.c_str());
        if (e == EEXIST) return error("appeared while the archive was written (refusing to overwrite it)");
        return error(std::strerror(e));
    }
    return {};
}

}  // namespace faultline
