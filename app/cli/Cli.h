#pragma once

namespace faultline::cli {

// Exit codes (public interface).
inline constexpr int kExitOk = 0;
inline constexpr int kExitDiverged = 1;  // compare/bisect: something is beyond tolerance
inline constexpr int kExitError = 2;     // bad input, usage errors, I/O errors

int run(int argc, char** argv);

}  // namespace faultline::cli
