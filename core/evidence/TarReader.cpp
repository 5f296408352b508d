#include "TarReader.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "../io/SafeFiles.h"

namespace faultline {
namespace {

constexpr uint64_t kTarBlock = 512;

std::optional<uint64_t> parseOctal(const char* field, size_t width)
{
    size_t i = 0;
    while (i < width && field[i] == ' ') ++i;
    uint64_t v = 0;
    size_t digits = 0;
    for (; i < width && field[i] >= '0' && field[i] <= '7'; ++i, ++digits) {
        if (v > (UINT64_MAX >> 3)) return std::nullopt;
        v = v * 8 + uint64_t(field[i] - '0');
    }
    if (digits == 0) return std::nullopt;
    for (; i < width; ++i)
        if (field[i] != ' ' && field[i] != '\0') return std::nullopt;
    return v;
}

// The checksum field exactly as every ustar writer spells it (POSIX leaves the form open; GNU tar,
// libarchive, Python's tarfile and TarWriter all write it so): six octal digits, a NUL, a
// space. Only this form is accepted: the field is left out of the sum it holds, so a looser
// reading (leading spaces for zeros, NUL for space) would let its bytes change unnoticed.
std::optional<uint64_t> parseChecksum(const char* field)
{
    if (field[6] != '\0' || field[7] != ' ') return std::nullopt;
    uint64_t v = 0;
    for (size_t i = 0; i < 6; ++i) {
        if (field[i] < '0' || field[i] > '7') return std::nullopt;
        v = v * 8 + uint64_t(field[i] - '0');
    }
    return v;
}

std::string fieldString(const char* field, size_t width)
{
    size_t n = 0;
    while (n < width && field[n] != '\0') ++n;
    return std::string(field, n);
}

bool allZero(const char* p, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (p[i] != 0) return false;
    return true;
}

}  // namespace

Result<TarReader> TarReader::open(const std::string& path)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return fileError(path, "is a directory, not a tar archive");
    if (Status st = checkRegularInput(path); !st) return st.error();  // a FIFO would block
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return fileError(path, std::strerror(errno));
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (ec) {
        std::fclose(f);
        return fileError(path, ec.message());
    }
    return TarReader(path, f, size);
}

TarReader::TarReader(TarReader&& o) noexcept
    : m_path(std::move(o.m_path)),
      m_file(o.m_file),
      m_fileSize(o.m_fileSize),
      m_offset(o.m_offset),
      m_remaining(o.m_remaining),
      m_pending(o.m_pending),
      m_ended(o.m_ended)
{
    o.m_file = nullptr;
}

TarReader::~TarReader()
{
    if (m_file) std::fclose(m_file);
}

Error TarReader::error(uint64_t offset, const std::string& problem) const
{
    return fileError(m_path, "byte " + std::to_string(offset) + ": " + problem);
}

Status TarReader::finishEntry(const std::function<void(const char*, size_t)>* sink)
{
    if (!m_pending) return {};
    std::array<char, 1 << 16> buf{};
    while (m_remaining > 0) {
        const size_t want = size_t(std::min<uint64_t>(buf.size(), m_remaining));
        const size_t n = std::fread(buf.data(), 1, want, m_file);
        if (n != want) return error(m_offset + n, "the archive ends inside a file's data");
        if (sink) (*sink)(buf.data(), n);
        m_offset += n;
        m_remaining -= n;
    }
    const size_t pad = size_t((kTarBlock - m_offset % kTarBlock) % kTarBlock);
    if (pad) {
        if (std::fread(buf.data(), 1, pad, m_file) != pad)
            return error(m_offset, "the archive ends inside padding");
        if (!allZero(buf.data(), pad)) return error(m_offset, "non-zero bytes in the padding after a file");
        m_offset += pad;
    }
    m_pending = false;
    return {};
}

Result<std::optional<TarEntry>> TarReader::next()
{
    if (m_ended) return std::optional<TarEntry>{};
    if (Status st = finishEntry(nullptr); !st) return st.error();
    std::array<char, kTarBlock> h{};
    const uint64_t at = m_offset;
    const size_t n = std::fread(h.data(), 1, h.size(), m_file);
    if (n != h.size())
        return error(at, n == 0 ? "the archive ends without its end-of-archive blocks"
                                : "the archive ends inside a header");
    m_offset += kTarBlock;
    if (allZero(h.data(), h.size())) {
        // End of archive: a second zero block, then only zero blocks (record padding).
        std::array<char, kTarBlock> z{};
        size_t zeroBlocks = 1;
        while (true) {
            const uint64_t zAt = m_offset;
            const size_t k = std::fread(z.data(), 1, z.size(), m_file);
            if (k == 0) break;
            if (k != z.size() || !allZero(z.data(), k))
                return error(zAt, "non-zero bytes after the end of the archive");
            m_offset += k;
            ++zeroBlocks;
        }
        if (zeroBlocks < 2) return error(at, "the archive ends with one zero block instead of two");
        m_ended = true;
        return std::optional<TarEntry>{};
    }
    const auto stored = parseChecksum(h.data() + 148);
    unsigned sum = 0;
    for (size_t i = 0; i < h.size(); ++i)
        sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
    if (!stored)
        return error(at,
                     "header checksum field is not six octal digits, a NUL and a space (a changed header)");
    if (*stored != sum) return error(at, "header checksum does not match (a changed header)");
    if (std::memcmp(h.data() + 257, "ustar", 5) != 0) return error(at, "not a ustar header");
    const auto size = parseOctal(h.data() + 124, 12);
    if (!size) return error(at, "header size field is not a number");
    TarEntry e;
    const std::string prefix = fieldString(h.data() + 345, 155);
    e.name = (prefix.empty() ? "" : prefix + "/") + fieldString(h.data(), 100);
    e.type = h[156] == '\0' ? '0' : h[156];
    e.size = *size;
    e.headerOffset = at;
    if (e.size > m_fileSize - m_offset)
        return error(at, "'" + e.name + "': size runs past the end of the archive");
    m_remaining = (e.type == '0' || e.type == '7') ? e.size : (e.type == '5' ? 0 : e.size);
    m_pending = true;
    return std::optional<TarEntry>{std::move(e)};
}

Status TarReader::readData(const std::function<void(const char*, size_t)>& sink)
{
    return finishEntry(&sink);
}

}  // namespace faultline
