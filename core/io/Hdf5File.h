#pragma once
// HDF5 snapshot and trace files as TensorFiles.
#include <memory>
#include <string>

#include "../TensorFile.h"

namespace faultline {

// True when the file carries the HDF5 signature (at offset 0 or after a user block).
bool isHdf5File(const std::string& path);

// Opens an HDF5 file; format() is Trace when the root attribute faultline_format="trace", else
// Snapshot.
Result<std::unique_ptr<TensorFile>> openHdf5TensorFile(const std::string& path, const OpenOptions& options = {});

}  // namespace faultline
