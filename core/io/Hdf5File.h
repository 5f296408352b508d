#pragma once
// HDF5 snapshot and trace files as TensorFiles.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../TensorFile.h"

namespace faultline {

// True when the file carries the HDF5 signature (at offset 0 or after a user block: 512, 1024,
// 2048, ... bytes).
bool isHdf5File(const std::string& path);

// Opens an HDF5 file; format() is Trace when the root attribute faultline_format="trace", else
// Snapshot. Every dataset whose type is a tensor convention (docs/formats.md) is listed, in
// depth-first order by name; other datasets are skipped with one warning per reason. External
// links, external raw storage and virtual datasets refuse the whole file unless
// options.allowExternal; a dangling soft link refuses it always.
Result<std::unique_ptr<TensorFile>> openHdf5TensorFile(const std::string& path,
                                                       const OpenOptions& options = {});

// The string attribute `attribute` of each group in `groups` (paths inside the file), in order;
// nullopt for a group that is missing or whose attribute is missing or not a string. An error
// (naming the file) only when the file cannot be opened.
Result<std::vector<std::optional<std::string>>> readHdf5GroupStringAttributes(
    const std::string& path, const std::vector<std::string>& groups, const std::string& attribute);

}  // namespace faultline
