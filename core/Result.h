#pragma once
// Errors as values at the boundaries (files, devices, processes). A message always names the
// file or device it is about, so it can be shown to the user as it is.
#include <string>
#include <utility>
#include <variant>

namespace faultline {

struct Error {
    std::string message;
};

// "PATH: PROBLEM", the one spelling of a file error everywhere.
inline Error fileError(const std::string& path, const std::string& problem)
{
    return Error{path + ": " + problem};
}

// Success or an Error, with no value.
class Status {
public:
    Status() = default;
    Status(Error e) : m_error(std::move(e.message)), m_failed(true) {}  // NOLINT: implicit on purpose
    static Status success() { return {}; }
    bool ok() const { return !m_failed; }
    explicit operator bool() const { return ok(); }
    const std::string& message() const { return m_error; }
    Error error() const { return Error{m_error}; }

private:
    std::string m_error;
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
    Status status() const { return ok() ? Status{} : Status{error()}; }

private:
    std::variant<T, Error> m_v;
};

}  // namespace faultline
