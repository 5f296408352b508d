#include "TargetSpec.h"

#include "../Text.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace faultline {
namespace {

bool startsWithKind(const std::string& s)
{
    return s == "cpu" || s.rfind("sim:", 0) == 0 || s.rfind("cuda:", 0) == 0;
}

// "k=v,k=v" (or '+'-joined) into spec.params.
Status parseParams(const std::string& text, const std::string& params, TargetSpec& spec)
{
    size_t pos = 0;
    while (pos <= params.size()) {
        size_t next = params.find_first_of(",+", pos);
        if (next == std::string::npos) next = params.size();
        const std::string kv = params.substr(pos, next - pos);
        if (!kv.empty()) {
            const size_t eq = kv.find('=');
            if (eq == std::string::npos || eq == 0)
                return Error{"target '" + text + "': parameter '" + kv + "' is not key=value",
                             ErrorCode::Usage};
            spec.params[kv.substr(0, eq)] = kv.substr(eq + 1);
        }
        pos = next + 1;
    }
    return {};
}

// The normalised text: "KIND:MODEL[:k=v+k=v]".
std::string normalisedText(const TargetSpec& spec)
{
    std::string text = spec.kind + ":" + spec.model;
    bool first = true;
    for (const auto& [k, v] : spec.params) {
        text += (first ? ":" : "+") + k + "=" + v;
        first = false;
    }
    return text;
}

}  // namespace

std::string TargetSpec::param(const std::string& key, const std::string& fallback) const
{
    auto it = params.find(key);
    return it == params.end() ? fallback : it->second;
}

Result<double> TargetSpec::number(const std::string& key, double fallback, double lo, double hi,
                                  bool real) const
{
    const auto it = params.find(key);
    if (it == params.end()) return fallback;
    const std::string& v = it->second;
    double d = 0;
    try {
        size_t used = 0;
        d = std::stod(v, &used);
        if (used != v.size() || !std::isfinite(d)) throw std::invalid_argument(v);
    } catch (...) {
        return Error{"target '" + text + "': parameter " + key + "=" + v + " is not a number",
                     ErrorCode::Usage};
    }
    if (d < lo || d > hi || (!real && std::floor(d) != d)) {
        std::ostringstream range;
        range << "[" << lo << ", " << hi << "]";
        return Error{"target '" + text + "': " + key + " must be " + (real ? "a number" : "an integer") +
                         " in " + range.str() + ", not " + v,
                     ErrorCode::Usage};
    }
    return d;
}

Result<TargetSpec> parseTargetSpec(const std::string& raw)
{
    const std::string text = trimmed(raw);
    TargetSpec spec;
    if (text == "cpu") {
        spec.text = spec.kind = "cpu";
        return spec;
    }
    const size_t colon = text.find(':');
    if (colon == std::string::npos)
        return Error{"target '" + text + "': expected cpu, sim:<model>[:k=v,...] or cuda:<index>",
                     ErrorCode::Usage};
    spec.kind = text.substr(0, colon);
    std::string rest = text.substr(colon + 1);
    if (spec.kind == "cuda") {
        // cuda:N[:k=v,...]: parameters (NCCL settings) only `faultline collective` uses.
        const size_t colon2 = rest.find(':');
        spec.model = rest.substr(0, colon2);
        if (spec.model.empty() || spec.model.find_first_not_of("0123456789") != std::string::npos ||
            spec.model.size() > 6)
            return Error{"target '" + text + "': cuda needs a device index, e.g. cuda:0", ErrorCode::Usage};
        if (colon2 != std::string::npos)
            if (Status st = parseParams(text, rest.substr(colon2 + 1), spec); !st) return st.error();
        spec.text = normalisedText(spec);
        return spec;
    }
    if (spec.kind != "sim")
        return Error{
            "target '" + text + "': unknown kind '" + spec.kind + "' (cpu, sim:<model>, cuda:<index>)",
            ErrorCode::Usage};
    const size_t colon2 = rest.find(':');
    spec.model = rest.substr(0, colon2);
    if (spec.model.empty())
        return Error{"target '" + text + "': sim needs a fault model, e.g. sim:stuck-bit", ErrorCode::Usage};
    if (colon2 != std::string::npos)
        if (Status st = parseParams(text, rest.substr(colon2 + 1), spec); !st) return st.error();
    spec.text = normalisedText(spec);
    return spec;
}

Result<std::vector<TargetSpec>> parseTargetList(const std::string& text)
{
    // Split on ',' but keep "k=v,k=v" parameter runs attached to their sim target.
    std::vector<std::string> parts;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t next = text.find(',', pos);
        if (next == std::string::npos) next = text.size();
        const std::string piece = trimmed(text.substr(pos, next - pos));
        if (!piece.empty()) {
            if (parts.empty() || startsWithKind(piece) || piece.find('=') == std::string::npos)
                parts.push_back(piece);
            else
                parts.back() += "," + piece;
        }
        pos = next + 1;
    }
    if (parts.empty()) return Error{"no targets given", ErrorCode::Usage};
    std::vector<TargetSpec> specs;
    for (const std::string& p : parts) {
        auto s = parseTargetSpec(p);
        if (!s) return s.error();
        specs.push_back(std::move(s).value());
    }
    return specs;
}

}  // namespace faultline
