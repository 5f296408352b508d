#include "LinkFault.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

namespace faultline {

std::string LinkFault::describe() const
{
    if (!active()) return "healthy links";
    std::ostringstream o;
    o << "link to rank " << to << ":";
    if (flipRate > 0) o << " bit flips in " << flipRate * 100 << " % of words";
    if (stuckBit >= 0) o << " bit " << stuckBit << " stuck at " << (stuckValue ? 1 : 0);
    if (dropRate > 0) o << " " << dropRate * 100 << " % of " << chunkBytes << "-byte chunks lost";
    if (repeatRate > 0) o << " " << repeatRate * 100 << " % of " << chunkBytes << "-byte chunks repeated";
    return o.str();
}

uint64_t LinkFault::corrupt(unsigned char* bytes, size_t size, size_t src, uint32_t rep) const
{
    if (!active()) return 0;
    const std::vector<unsigned char> sent(bytes, bytes + size);
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull ^ (uint64_t(src) << 40) ^ (uint64_t(to) << 20) ^ rep);
    std::uniform_real_distribution<double> u(0, 1);
    const size_t words = size / 4;
    for (size_t w = 0; w < words; ++w) {
        uint32_t x;
        std::memcpy(&x, bytes + 4 * w, 4);
        if (flipRate > 0 && u(rng) < flipRate) x ^= 1u << (rng() % 32);
        if (stuckBit >= 0) x = stuckValue ? (x | (1u << stuckBit)) : (x & ~(1u << stuckBit));
        std::memcpy(bytes + 4 * w, &x, 4);
    }
    if (dropRate > 0 || repeatRate > 0) {
        for (size_t c = 0; c * chunkBytes < size; ++c) {
            const size_t begin = c * chunkBytes, n = std::min<size_t>(chunkBytes, size - begin);
            if (dropRate > 0 && u(rng) < dropRate) {
                std::memset(bytes + begin, 0, n);
            } else if (c > 0 && repeatRate > 0 && u(rng) < repeatRate) {
                std::memcpy(bytes + begin, sent.data() + begin - chunkBytes, std::min(n, size_t(chunkBytes)));
            }
        }
    }
    uint64_t changed = 0;
    for (size_t i = 0; i < size; ++i) changed += bytes[i] != sent[i];
    return changed;
}

Result<LinkFault> takeLinkFault(TargetSpec& spec, size_t self, size_t groupSize)
{
    LinkFault link;
    bool any = false;
    for (const auto& [key, value] : spec.params)
        if (key.rfind("link_", 0) == 0) any = true;
    if (!any) return link;
    static const std::vector<std::string> known = {"link_to",   "link_rate",   "link_bit",   "link_value",
                                                   "link_drop", "link_repeat", "link_chunk", "link_seed"};
    for (const auto& [key, value] : spec.params)
        if (key.rfind("link_", 0) == 0 && std::find(known.begin(), known.end(), key) == known.end())
            return Error{"target '" + spec.text + "': unknown link parameter '" + key + "'",
                         ErrorCode::Usage};
    if (!spec.params.count("link_to"))
        return Error{
            "target '" + spec.text + "': link parameters without link_to (the link they would act on)",
            ErrorCode::Usage};
    auto num = [&](const std::string& key, double lo, double hi, bool integral,
                   double fallback) -> Result<double> {
        return spec.number(key, fallback, lo, hi, !integral);
    };
    auto to = num("link_to", 0, double(groupSize) - 1, true, -1);
    if (!to) return to.error();
    if (size_t(*to) == self)
        return Error{
            "target '" + spec.text + "': link_to=" + spec.param("link_to", "") + " is this rank itself",
            ErrorCode::Usage};
    link.to = int64_t(*to);
    auto rate = num("link_rate", 0, 1, false, 0);
    auto bit = num("link_bit", 0, 31, true, -1);
    auto value = num("link_value", 0, 1, true, 1);
    auto drop = num("link_drop", 0, 1, false, 0);
    auto repeat = num("link_repeat", 0, 1, false, 0);
    auto chunk = num("link_chunk", 4, double(1u << 30), true, 4096);
    auto seed = num("link_seed", 0, 9007199254740992.0, true, 0);
    for (const auto* r : {&rate, &bit, &value, &drop, &repeat, &chunk, &seed})
        if (!*r) return r->error();
    link.flipRate = *rate;
    link.stuckBit = int(*bit);
    link.stuckValue = *value != 0;
    link.dropRate = *drop;
    link.repeatRate = *repeat;
    link.chunkBytes = uint64_t(*chunk);
    link.seed = uint64_t(*seed);
    if (link.flipRate == 0 && link.stuckBit < 0 && link.dropRate == 0 && link.repeatRate == 0)
        return Error{"target '" + spec.text +
                         "': link_to without a defect (link_rate, link_bit, link_drop or link_repeat)",
                     ErrorCode::Usage};
    for (auto it = spec.params.begin(); it != spec.params.end();)
        it = it->first.rfind("link_", 0) == 0 ? spec.params.erase(it) : std::next(it);
    return link;
}

}  // namespace faultline
