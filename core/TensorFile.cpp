#include "TensorFile.h"

#include <filesystem>
#include <system_error>

#include "io/Hdf5File.h"
#include "io/SafetensorsFile.h"

namespace faultline {

const char* fileFormatName(FileFormat f)
{
    switch (f) {
        case FileFormat::Snapshot:
            return "snapshot";
        case FileFormat::Trace:
            return "trace";
        case FileFormat::Safetensors:
            return "safetensors";
    }
    return "unknown";
}

std::optional<size_t> TensorFile::find(const std::string& name) const
{
    const std::string key = (!name.empty() && name.front() == '/') ? name.substr(1) : name;
    const auto& all = tensors();
    for (size_t i = 0; i < all.size(); ++i)
        if (all[i].name == key) return i;
    return std::nullopt;
}

Status checkRegularFile(const std::string& path)
{
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    // A symlink loop, a permission problem on the way, ... are said as they are, not "no such file".
    if (ec && ec != std::errc::no_such_file_or_directory) return fileError(path, ec.message(), ErrorCode::Io);
    if (ec || !std::filesystem::exists(status)) return fileError(path, "no such file", ErrorCode::Io);
    if (std::filesystem::is_directory(status))
        return fileError(path, "is a directory, not a tensor file", ErrorCode::Io);
    if (!std::filesystem::is_regular_file(status))
        return fileError(path, "not a regular file (a FIFO, socket or device)", ErrorCode::Io);
    return {};
}

Result<std::unique_ptr<TensorFile>> openTensorFile(const std::string& path, const OpenOptions& options)
{
    if (Status st = checkRegularFile(path); !st) return st.error();
    std::error_code ec;
    if (isHdf5File(path)) return openHdf5TensorFile(path, options);
    if (looksLikeSafetensors(path)) return openSafetensors(path, options);
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size == 0) return fileError(path, "empty file");
    return fileError(path, "not a tensor file: neither an HDF5 signature nor a safetensors header");
}

}  // namespace faultline
