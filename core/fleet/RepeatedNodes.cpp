#include "RepeatedNodes.h"

#include "../Text.h"
#include "../evidence/MessageDigest.h"
#include "../io/SafeFiles.h"

namespace faultline {

std::string campaignContentDigest(const nlohmann::json& campaign)
{
    // CBOR: canonical (keys sorted), and unlike dump() it takes strings that are not UTF-8.
    const std::vector<uint8_t> bytes = nlohmann::json::to_cbor(campaign);
    return toHex(Sha256::of(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
}

nlohmann::json RepeatedNode::toJson() const
{
    return {{"file", printableText(file)}, {"same_as", printableText(sameAs)}, {"reason", reason}};
}

std::optional<RepeatedNode> RepeatedNodes::check(const FleetNode& node, const std::string& contentDigest)
{
    const auto repeat = [&](uint32_t first, std::string reason) {
        RepeatedNode r{node.file, m_files[first], std::move(reason)};
        m_repeats.push_back(r);
        return r;
    };
    if (const auto c = m_byContent.find(contentDigest); c != m_byContent.end()) {
        const std::string& first = m_files[c->second];
        const bool sameFile_ = first == node.file || sameFile(first, node.file);
        return repeat(c->second, sameFile_ ? "the same file" : "identical content");
    }
    // A node without identity is named by its file: only its content can repeat another's.
    const bool keyed = node.named && !node.task.empty();
    std::string hostTask;
    if (keyed) {
        hostTask = node.host;
        hostTask += '\0';
        hostTask += node.task;
        if (const auto h = m_byHostTask.find(hostTask); h != m_byHostTask.end())
            return repeat(h->second, "the same host and task");
    }
    const auto index = uint32_t(m_files.size());
    m_files.push_back(node.file);
    m_byContent.emplace(contentDigest, index);
    if (keyed) m_byHostTask.emplace(std::move(hostTask), index);
    return std::nullopt;
}

size_t RepeatedNodes::markGpusVotedBefore(FleetNode& node)
{
    size_t marked = 0;
    std::vector<std::string> fresh;
    for (FleetGpu& g : node.gpus) {
        if (g.uuid.empty()) continue;
        if (m_uuids.count(g.uuid)) {
            g.votedBefore = true;
            ++marked;
        } else {
            fresh.push_back(g.uuid);
        }
    }
    // Two GPUs of one node with one UUID: the node's own inventory says so; both vote once each
    // as the node's campaign judged them.
    m_uuids.insert(fresh.begin(), fresh.end());
    return marked;
}

}  // namespace faultline
