#include "SafeFiles.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace faultline {
namespace {

std::string kindName(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "not a regular file";
}

}  // namespace

Status checkRegularInput(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        const int e = errno;
        return fileError(path, e == ENOENT ? "no such file" : errnoText(e),
                         e == ENOENT ? ErrorCode::Usage : ErrorCode::Io);
    }
    if (!S_ISREG(st.st_mode))
        return fileError(path, "not a regular file (" + kindName(st.st_mode) + ")", ErrorCode::Usage);
    return {};
}

Status checkReplaceableOutput(const std::string& path, const std::string& what)
{
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return {};
        return fileError(path, what + ": " + errnoText(errno), ErrorCode::Io);
    }
    // A regular file is replaced; so is a link (rename replaces the link itself, never what it
    // points at).
    if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return {};
    return fileError(path, what + " is " + kindName(st.st_mode) + ", not a file it may replace",
                     ErrorCode::Usage);
}

bool sameFile(const std::string& a, const std::string& b)
{
    struct stat sa {
    }, sb{};
    if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

Result<TempFile> openTempBeside(const std::string& path)
{
    // mkstemps opens with O_RDWR|O_CREAT|O_EXCL: a link planted at the name (even a dangling
    // one) makes it fail and try another name; it never writes through the link.
    std::vector<char> name(path.begin(), path.end());
    const std::string pattern = ".XXXXXX.tmp";
    name.insert(name.end(), pattern.begin(), pattern.end());
    name.push_back('\0');
    int fd;
    do {
        fd = ::mkostemps(name.data(), 4, O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return fileError(path, "cannot create a temporary file beside it: " + errnoText(errno),
                         ErrorCode::Io);
    ::fchmod(fd, 0644);
    return TempFile{std::string(name.data()), fd};
}

Result<std::string> createTempBeside(const std::string& path)
{
    auto t = openTempBeside(path);
    if (!t) return t.error();
    ::close(t->fd);
    return t->path;
}

Result<int> openLockFile(const std::string& path)
{
    int fd;
    do {
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        const int e = errno;
        if (e == ELOOP)
            return fileError(path, "is a symbolic link; a lock file never follows one", ErrorCode::Usage);
        return fileError(path, "cannot open the lock file: " + errnoText(e), ErrorCode::Io);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return fileError(path, "the lock file is not a regular file", ErrorCode::Usage);
    }
    return fd;
}

std::string errnoText(int e)
{
    return std::system_category().message(e);
}

bool pathOccupied(const std::string& path)
{
    std::error_code ec;
    return std::filesystem::exists(std::filesystem::symlink_status(path, ec));
}

}  // namespace faultline
