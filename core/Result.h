#pragma once
// Errors as values at the boundaries (files, devices, processes). A message always names the
// file or device it is about, so it can be shown to the user as it is; a code says what kind of
// failure it is, so callers decide by code (a cancellation is not a failure to report, a fatal
// device error restarts the worker) and never by comparing message text.
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace faultline {

enum class ErrorCode {
    Failed,       // anything not classified below
    Io,           // a file or stream could not be opened, read or written
    Format,       // a file was read but its content is malformed or unsupported
    Usage,        // an option, argument or parameter value is invalid
    Device,       // a device call failed; the device is still usable
    FatalDevice,  // a device error that poisoned the context (sticky): the worker must restart
    Protocol,     // a worker or peer process broke the protocol (bad reply, wrong version)
    Cancelled,    // the user or a newer request cancelled the work
};

// The code's stable name ("io", "format", "fatal_device", ...), as JSON output spells it.
constexpr std::string_view errorCodeName(ErrorCode code)
{
    switch (code) {
        case ErrorCode::Failed:
            return "failed";
        case ErrorCode::Io:
            return "io";
        case ErrorCode::Format:
            return "format";
        case ErrorCode::Usage:
            return "usage";
        case ErrorCode::Device:
            return "device";
        case ErrorCode::FatalDevice:
            return "fatal_device";
        case ErrorCode::Protocol:
            return "protocol";
        case ErrorCode::Cancelled:
            return "cancelled";
    }
    return "failed";
}

struct Error {
    std::string message;
    ErrorCode code = ErrorCode::Failed;

    bool cancelled() const { return code == ErrorCode::Cancelled; }
};

// "PATH: PROBLEM", the one spelling of a file error everywhere. The default code is Format (the
// file was read and something in it is wrong); pass Io for open/read/write failures.
inline Error fileError(const std::string& path, const std::string& problem,
                       ErrorCode code = ErrorCode::Format)
{
    return Error{path + ": " + problem, code};
}

// A cancellation: `what` says what stopped ("comparison cancelled").
inline Error cancelledError(std::string what)
{
    return Error{std::move(what), ErrorCode::Cancelled};
}

// Success or an Error, with no value.
class Status {
public:
    Status() = default;
    Status(Error e) : m_error(std::move(e)), m_failed(true) {}  // NOLINT: implicit on purpose
    static Status success() { return {}; }
    bool ok() const { return !m_failed; }
    explicit operator bool() const { return ok(); }
    const std::string& message() const { return m_error.message; }
    ErrorCode code() const { return m_error.code; }
    const Error& error() const { return m_error; }

private:
    Error m_error;
    bool m_failed = false;
};

// A value or an Error.
template <class T>
class Result {
public:
    Result(T value) : m_v(std::move(value)) {}  // NOLINT: implicit on purpose
    Result(Error e) : m_v(std::move(e)) {}      // NOLINT: implicit on purpose
    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<0>(m_v); }
    const T& value() const& { return std::get<0>(m_v); }
    T&& value() && { return std::get<0>(std::move(m_v)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    const Error& error() const { return std::get<1>(m_v); }
    const std::string& message() const { return error().message; }
    ErrorCode code() const { return error().code; }
    Status status() const { return ok() ? Status{} : Status{error()}; }

private:
    std::variant<T, Error> m_v;
};

}  // namespace faultline
