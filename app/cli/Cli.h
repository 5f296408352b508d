#pragma once
#include <iosfwd>

#include "core/Result.h"

namespace faultline::cli {

// Exit codes (public interface).
inline constexpr int kExitOk = 0;
inline constexpr int kExitDiverged = 1;  // compare/bisect/replay: something diverged; health: something found
inline constexpr int kExitError =
    2;  // bad input, usage errors, I/O errors, device and protocol errors, cancel

// The exit code an error ends a command with. Every code is 2 today: 1 means "the evidence shows
// a problem" and no kind of failure to produce evidence may look like that.
constexpr int exitCodeFor(ErrorCode code)
{
    switch (code) {
        case ErrorCode::Failed:
        case ErrorCode::Io:
        case ErrorCode::Format:
        case ErrorCode::Usage:
        case ErrorCode::Device:
        case ErrorCode::FatalDevice:
        case ErrorCode::Protocol:
        case ErrorCode::Cancelled:
            return kExitError;
    }
    return kExitError;
}

// Prints `e` as one line ("error: MESSAGE") on stderr and returns exitCodeFor(e.code).
int failWith(const Error& e);

int run(int argc, char** argv);

}  // namespace faultline::cli
