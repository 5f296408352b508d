#include "BootId.h"

#include <cctype>
#include <fstream>

namespace faultline {

std::string readBootId(const std::string& path)
{
    std::ifstream in(path);
    if (!in) return {};
    char buf[65] = {};
    in.read(buf, 64);
    std::string id;
    for (size_t i = 0; i < static_cast<size_t>(in.gcount()) && buf[i] != '\n'; ++i) {
        const auto c = static_cast<unsigned char>(buf[i]);
        if (c == '-') continue;
        if (!std::isxdigit(c)) return {};
        id += static_cast<char>(std::tolower(c));
    }
    return id.size() == 32 ? id : std::string();
}

}  // namespace faultline
