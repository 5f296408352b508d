#include "AtomicFile.h"

#include "SafeFiles.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <system_error>

namespace faultline {
namespace {

Status writeAll(int fd, const void* data, size_t size, const std::string& path)
{
    const auto* p = static_cast<const unsigned char*>(data);
    while (size > 0) {
        const size_t chunk = std::min<size_t>(size, size_t(1) << 30);
        const ssize_t w = ::write(fd, p, chunk);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return fileError(path,
                             "write failed: " + (w < 0 ? errnoText(errno) : std::string("nothing written")),
                             ErrorCode::Io);
        p += w;
        size -= size_t(w);
    }
    return {};
}

}  // namespace

Status replaceFileAtomically(const std::string& path, const FileParts& parts)
{
    if (Status st = checkReplaceableOutput(path, "the output"); !st) return st;
    auto temp = openTempBeside(path);
    if (!temp) return temp.error();
    const std::string tmp = temp->path;
    const int fd = temp->fd;
    Status status;
    for (size_t i = 0; status.ok() && i < parts.size(); ++i)
        if (parts[i].second > 0) status = writeAll(fd, parts[i].first, parts[i].second, path);
    if (status.ok() && ::fsync(fd) != 0)
        status = fileError(path, "fsync failed: " + errnoText(errno), ErrorCode::Io);
    if (::close(fd) != 0 && status.ok())
        status = fileError(path, "close failed: " + errnoText(errno), ErrorCode::Io);
    if (status.ok() && std::rename(tmp.c_str(), path.c_str()) != 0)
        status = fileError(path, "cannot rename " + tmp + " to it: " + errnoText(errno), ErrorCode::Io);
    if (!status.ok()) ::unlink(tmp.c_str());
    return status;
}

}  // namespace faultline
