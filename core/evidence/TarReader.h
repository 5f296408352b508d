#pragma once
// Reads ustar archives strictly, for checking evidence bundles: every header's checksum (in its
// one written form: six octal digits, NUL, space), the padding after each file and the end of
// the archive (zero blocks, nothing else) are checked, so that any changed byte of the archive
// is found. A file is read in chunks, never whole; only a regular file is opened (a FIFO would
// block).
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include "../Result.h"

namespace faultline {

struct TarEntry {
    std::string name;  // prefix/name as stored (directories end in '/')
    char type = '0';   // '0' file, '5' directory, anything else as stored
    uint64_t size = 0;
    uint64_t headerOffset = 0;  // byte offset of the header in the archive
};

class TarReader {
public:
    // Errors name the file.
    static Result<TarReader> open(const std::string& path);
    TarReader(TarReader&& o) noexcept;
    TarReader& operator=(TarReader&&) = delete;
    TarReader(const TarReader&) = delete;
    TarReader& operator=(const TarReader&) = delete;
    ~TarReader();

    // The next entry, or nullopt at the end of the archive (then the rest of the file has been
    // checked to be zero blocks). The data of the previous entry is skipped (and its padding
    // checked) when it was not read. A damaged header is an error naming the byte offset.
    Result<std::optional<TarEntry>> next();
    // The current entry's bytes, in chunks of at most 64 KiB, then its padding is checked.
    Status readData(const std::function<void(const char*, size_t)>& sink);

    const std::string& path() const { return m_path; }

private:
    TarReader(std::string path, std::FILE* f, uint64_t size)
        : m_path(std::move(path)), m_file(f), m_fileSize(size)
    {
    }
    Status finishEntry(const std::function<void(const char*, size_t)>* sink);
    Error error(uint64_t offset, const std::string& problem) const;

    std::string m_path;
    std::FILE* m_file = nullptr;
    uint64_t m_fileSize = 0;
    uint64_t m_offset = 0;     // where the next unread byte is
    uint64_t m_remaining = 0;  // data bytes of the current entry not yet consumed
    bool m_pending = false;    // the current entry's data and padding are not consumed yet
    bool m_ended = false;
};

}  // namespace faultline
