#pragma once
// Writing a whole file so that a failure (a full disk, a quota, an I/O error) never leaves a
// half-written file under its real name: the bytes go to a new temporary PATH.XXXXXX.tmp
// (created with O_EXCL, so a link planted there is never written through), which is flushed to
// disk (fsync) and renamed to PATH. On any failure PATH is as it was, the temporary is removed,
// and the error names PATH and what failed. A PATH that is a link, a directory or a FIFO is
// refused rather than replaced.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../Result.h"

namespace faultline {

// (data, size) pieces written one after the other.
using FileParts = std::vector<std::pair<const void*, size_t>>;

Status replaceFileAtomically(const std::string& path, const FileParts& parts);

}  // namespace faultline
