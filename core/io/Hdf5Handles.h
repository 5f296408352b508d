#pragma once
// Thin RAII layer over the HDF5 C API, used only inside core's .cpp files (public headers never
// include hdf5.h).
//
// - Hdf5Lock: the one process-wide lock that every HDF5 call holds. Debian's libhdf5 is not
//   built thread-safe for all configurations we meet, so we serialise every call ourselves. It is
//   recursive, so helpers that lock may call each other. Taking it also switches off HDF5's
//   automatic printing of its error stack to stderr for the calling thread.
// - Handle<Close>: owns one hid_t and closes it (under the lock) when it goes out of scope.
// - hdf5ErrorText(): turns the calling thread's HDF5 error stack into one line of text and clears
//   it, so errors reach the user as "PATH: what we did: what HDF5 said".
#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "../Result.h"
#include "../TensorFile.h"
#include "FlatRange.h"

namespace faultline::hdf5 {

inline std::recursive_mutex& hdf5Mutex()
{
    static std::recursive_mutex mutex;
    return mutex;
}

class Hdf5Lock {
public:
    Hdf5Lock() : m_lock(hdf5Mutex())
    {
        // The automatic error printer is per thread in thread-safe builds and global otherwise;
        // switching it off once per thread covers both.
        thread_local bool silenced = false;
        if (!silenced) {
            H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
            silenced = true;
        }
    }

private:
    std::unique_lock<std::recursive_mutex> m_lock;
};

template <herr_t (*Close)(hid_t)>
class Handle {
public:
    Handle() = default;
    explicit Handle(hid_t id) : m_id(id) {}
    ~Handle() { reset(); }
    Handle(Handle&& other) noexcept : m_id(std::exchange(other.m_id, H5I_INVALID_HID)) {}
    Handle& operator=(Handle&& other) noexcept
    {
        if (this != &other) {
            reset();
            m_id = std::exchange(other.m_id, H5I_INVALID_HID);
        }
        return *this;
    }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;

    hid_t get() const { return m_id; }
    bool valid() const { return m_id >= 0; }
    explicit operator bool() const { return valid(); }
    hid_t release() { return std::exchange(m_id, H5I_INVALID_HID); }
    void reset(hid_t id = H5I_INVALID_HID)
    {
        if (m_id >= 0) {
            Hdf5Lock lock;
            Close(m_id);
        }
        m_id = id;
    }

private:
    hid_t m_id = H5I_INVALID_HID;
};

using FileHandle = Handle<H5Fclose>;
using GroupHandle = Handle<H5Gclose>;
using DatasetHandle = Handle<H5Dclose>;
using SpaceHandle = Handle<H5Sclose>;
using TypeHandle = Handle<H5Tclose>;
using AttrHandle = Handle<H5Aclose>;
using PlistHandle = Handle<H5Pclose>;
using ObjectHandle = Handle<H5Oclose>;

namespace detail {
struct ErrorWalk {
    std::vector<std::string> lines;
};

inline herr_t collectError(unsigned, const H5E_error2_t* e, void* data)
{
    auto* walk = static_cast<ErrorWalk*>(data);
    std::string line = e->desc ? e->desc : "";
    // The file driver's report is many fields on several lines; the system's reason is the one
    // the user needs ("No space left on device").
    if (const size_t at = line.find("error message = '"); at != std::string::npos) {
        const size_t begin = at + 17, end = line.find('\'', begin);
        const size_t cut = line.find(':');
        line = line.substr(0, cut == std::string::npos ? 0 : cut) + ": " + line.substr(begin, end - begin);
    }
    std::replace(line.begin(), line.end(), '\n', ' ');
    if (line.empty()) {  // fall back to the minor message ("Bad value", ...)
        char minor[256] = {0};
        if (H5Eget_msg(e->min_num, nullptr, minor, sizeof minor) > 0) line = minor;
    }
    if (!line.empty()) walk->lines.push_back(std::move(line));
    return 0;
}
}  // namespace detail

// The calling thread's HDF5 error stack as one line ("" when empty), deepest cause last; clears
// the stack. Call with the lock held, right after the failing call.
inline std::string hdf5ErrorText()
{
    Hdf5Lock lock;
    detail::ErrorWalk walk;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, detail::collectError, &walk);
    H5Eclear2(H5E_DEFAULT);
    // Upward = deepest cause first, the API call last. Keep those two: the middle frames repeat
    // each other.
    if (walk.lines.empty()) return {};
    if (walk.lines.size() == 1 || walk.lines.front() == walk.lines.back()) return walk.lines.front();
    return walk.lines.back() + ": " + walk.lines.front();
}

// fileError(path, what + ": " + HDF5's explanation); call right after the failing HDF5 call.
inline Error hdf5Error(const std::string& path, const std::string& what)
{
    const std::string why = hdf5ErrorText();
    return fileError(path, why.empty() ? what : what + ": " + why);
}

// What kind of object a link leads to, and an identity that is equal for the same object
// (file number + address, or + token from HDF5 1.12 on), for cycle detection.
struct ObjectInfo {
    H5O_type_t type = H5O_TYPE_UNKNOWN;
    std::string identity;
};

namespace detail {
#if H5_VERSION_GE(1, 12, 0)
inline ObjectInfo toObjectInfo(const H5O_info2_t& info)
{
    return {info.type, std::to_string(info.fileno) + ":" +
                           std::string(reinterpret_cast<const char*>(&info.token), sizeof info.token)};
}
#else
inline ObjectInfo toObjectInfo(const H5O_info_t& info)
{
    return {info.type, std::to_string(info.fileno) + ":" + std::to_string(info.addr)};
}
#endif
}  // namespace detail

// Information about the object `name` (relative to `loc`) names; false on failure.
inline bool objectInfoByName(hid_t loc, const char* name, hid_t linkAccess, ObjectInfo* out)
{
    Hdf5Lock lock;
#if H5_VERSION_GE(1, 12, 0)
    H5O_info2_t info;
    if (H5Oget_info_by_name3(loc, name, &info, H5O_INFO_BASIC, linkAccess) < 0) return false;
#else
    H5O_info_t info;
    if (H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, linkAccess) < 0) return false;
#endif
    *out = detail::toObjectInfo(info);
    return true;
}

// Information about the open object `obj`; false on failure.
inline bool objectInfo(hid_t obj, ObjectInfo* out)
{
    Hdf5Lock lock;
#if H5_VERSION_GE(1, 12, 0)
    H5O_info2_t info;
    if (H5Oget_info3(obj, &info, H5O_INFO_BASIC) < 0) return false;
#else
    H5O_info_t info;
    if (H5Oget_info2(obj, &info, H5O_INFO_BASIC) < 0) return false;
#endif
    *out = detail::toObjectInfo(info);
    return true;
}

// Selects the boxes (from flatRangeBoxes) in `space`, OR-ed together. False on HDF5 failure.
inline bool selectBoxes(hid_t space, const std::vector<HyperslabBox>& boxes)
{
    Hdf5Lock lock;
    bool first = true;
    for (const HyperslabBox& box : boxes) {
        std::vector<hsize_t> start(box.start.begin(), box.start.end());
        std::vector<hsize_t> count(box.count.begin(), box.count.end());
        if (H5Sselect_hyperslab(space, first ? H5S_SELECT_SET : H5S_SELECT_OR, start.data(), nullptr,
                                count.data(), nullptr) < 0)
            return false;
        first = false;
    }
    if (first) return H5Sselect_none(space) >= 0;
    return true;
}

}  // namespace faultline::hdf5

#include "Hdf5File.h"

namespace faultline::hdf5 {

// Refuses to traverse an external link (used in link-access property lists while the user has
// not allowed external files).
inline herr_t refuseExternalLink(const char*, const char*, const char*, const char*, unsigned*, hid_t, void*)
{
    return -1;
}

// Opens an existing HDF5 file read-only. Errors name the file.
//
// The close degree is weak, the one HDF5 gives every file an external link opens: a file that is
// already open (the other input of a comparison, or the file itself) can then be reached through
// an external link, which HDF5 refuses when the degrees differ. Every handle we open is owned by
// an RAII object, so nothing outlives its file unclosed.
inline Result<FileHandle> openReadOnly(const std::string& path)
{
    if (Status st = checkRegularFile(path); !st) return st.error();
    if (!isHdf5File(path)) return fileError(path, "not an HDF5 file (no HDF5 signature)");
    Hdf5Lock lock;
    PlistHandle fapl(H5Pcreate(H5P_FILE_ACCESS));
    if (!fapl || H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_WEAK) < 0)
        return hdf5Error(path, "cannot set up HDF5 file access");
    FileHandle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
    if (!file) return hdf5Error(path, "cannot open as HDF5");
    return file;
}

}  // namespace faultline::hdf5
