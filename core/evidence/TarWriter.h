#pragma once
// Writes POSIX ustar archives: directories and regular files, names up to 255 bytes (split into
// the header's prefix and name fields at a '/'), files up to 8 GiB, uid/gid 0, owner names
// empty, then two zero blocks. Written to a new temporary file beside PATH (PATH.XXXXXX.tmp,
// created with O_EXCL: a link planted at a temporary name is never written through) and moved to
// PATH by close() without replacing anything there; refuses an existing PATH (a link too).
#include <cstdint>
#include <cstdio>
#include <string>

#include "../Result.h"

namespace faultline {

class TarWriter {
public:
    static Result<TarWriter> create(const std::string& path);
    TarWriter(TarWriter&& o) noexcept;
    TarWriter& operator=(TarWriter&&) = delete;
    TarWriter(const TarWriter&) = delete;
    TarWriter& operator=(const TarWriter&) = delete;
    // Without a successful close(): removes the temporary file.
    ~TarWriter();

    // `name` without a trailing '/' (the writer adds it); mtime in seconds since the epoch.
    Status addDirectory(const std::string& name, int64_t mtime);
    // The bytes of the file at `sourcePath` as `name`.
    Status addFile(const std::string& name, const std::string& sourcePath, int64_t mtime);
    Status close();

private:
    TarWriter(std::string path, std::string tmp, std::FILE* f)
        : m_path(std::move(path)), m_tmp(std::move(tmp)), m_file(f)
    {
    }
    Status writeHeader(const std::string& name, char type, uint64_t size, uint32_t mode, int64_t mtime);
    Status writeBytes(const void* data, size_t size);
    Error error(const std::string& problem) const;

    std::string m_path, m_tmp;
    std::FILE* m_file = nullptr;
};

}  // namespace faultline
