#pragma once
// Opening and creating files so that a planted link or special file cannot redirect a write or
// block a read (docs/threat-model.md): temporaries are created new (O_EXCL|O_NOFOLLOW, a unique
// name beside the target), locks never follow a link, and an input is checked to be a regular
// file before anything opens it (a FIFO would block, a device would never end).
#include <string>

#include "../Result.h"

namespace faultline {

// Ok when `path` is a regular file (after following links: an input reached through a link is
// the user's choice); else "PATH: not a regular file (a FIFO)" etc. Usage for a missing file.
Status checkRegularInput(const std::string& path);

// Ok when nothing exists at `path`, or a regular file or a link does (a rename onto `path`
// replaces it; a link is replaced itself, its target is never written); a directory, a FIFO or
// a device at an output path is refused, naming it. `what` says which output ("--out").
Status checkReplaceableOutput(const std::string& path, const std::string& what);

// Whether `a` and `b` name the same existing file (same device and inode).
bool sameFile(const std::string& a, const std::string& b);

// The C library's text for error number `e`.
std::string errnoText(int e);

// Whether something (a file, a folder, a link, even a dangling one) is at `path`.
bool pathOccupied(const std::string& path);

// A new, empty, regular file beside `path` (same folder, so a rename onto `path` is atomic),
// named PATH.XXXXXX.tmp, created with O_EXCL|O_NOFOLLOW. Returns its name; the file is closed.
Result<std::string> createTempBeside(const std::string& path);

// An open descriptor of the same, for writers that write through a descriptor (close it).
struct TempFile {
    std::string path;
    int fd = -1;
};
Result<TempFile> openTempBeside(const std::string& path);

// Opens (creating it if needed) the lock file `path` for reading and writing without following
// a link, refusing anything that is not a regular file. Returns the descriptor (O_CLOEXEC).
Result<int> openLockFile(const std::string& path);

}  // namespace faultline
