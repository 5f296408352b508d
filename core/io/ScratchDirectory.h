#pragma once
// A private scratch directory that is removed with everything in it when its owner is done, and
// also when the owner is killed with -9: a detached guardian process (`sh` in its own session,
// with the terminal's signals blocked) waits on a pipe that only the owner holds, and removes the
// directory once the pipe closes, which the kernel does for a dead owner too.
#include <memory>
#include <string>

#include "../Result.h"

namespace faultline {

class ScratchDirectory {
public:
    // Creates `parent`/`prefix`XXXXXX (mode 0700). With `guarded`, starts the guardian.
    static Result<ScratchDirectory> create(const std::string& parent, const std::string& prefix,
                                           bool guarded = true);
    // The system's temporary folder (TMPDIR, else /tmp).
    static std::string systemTemp();

    ScratchDirectory(ScratchDirectory&& o) noexcept;
    ScratchDirectory& operator=(ScratchDirectory&& o) noexcept;
    ScratchDirectory(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(const ScratchDirectory&) = delete;
    // Removes the directory and releases the guardian.
    ~ScratchDirectory();

    const std::string& path() const { return m_path; }
    // PATH/name.
    std::string file(const std::string& name) const;

private:
    ScratchDirectory() = default;
    void release();

    std::string m_path;
    int m_guardianPipe = -1;  // the write end; its closing tells the guardian to remove m_path
};

}  // namespace faultline
