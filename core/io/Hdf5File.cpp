#include "Hdf5File.h"

namespace faultline {

bool isHdf5File(const std::string&) { return false; }

Result<std::unique_ptr<TensorFile>> openHdf5TensorFile(const std::string& path, const OpenOptions&)
{
    return fileError(path, "HDF5 reading is not built yet");
}

}  // namespace faultline
