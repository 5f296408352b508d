#pragma once
// Writing a whole file so that a failure (a full disk, a quota, an I/O error) never leaves a
// half-written file under its real name: the bytes go to PATH.tmp, which is flushed to disk
// (fsync) and renamed to PATH. On any failure PATH is as it was, PATH.tmp is removed, and the
// error names PATH and what failed.
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
