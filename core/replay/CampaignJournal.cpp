#include "CampaignJournal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

namespace faultline {

Status CampaignJournal::open(const std::string& path)
{
    m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (m_fd < 0) return fileError(path, std::string("cannot open journal: ") + std::strerror(errno));
    m_path = path;
    return {};
}

CampaignJournal::~CampaignJournal()
{
    if (m_fd >= 0) ::close(m_fd);
}

Status CampaignJournal::append(const RunRecord& r)
{
    if (m_fd < 0) return {};
    std::lock_guard lock(m_mutex);
    const std::string line = r.toJson().dump() + "\n";
    if (::write(m_fd, line.data(), line.size()) != ssize_t(line.size()))
        return fileError(m_path, std::string("cannot append to journal: ") + std::strerror(errno));
    ::fdatasync(m_fd);
    return {};
}

// Reads a journal; a torn last line (the orchestrator was killed while writing) is skipped.
std::vector<RunRecord> readCampaignJournal(const std::string& path, std::vector<std::string>& warnings)
{
    std::vector<RunRecord> runs;
    std::ifstream in(path);
    std::string line;
    uint64_t bad = 0;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        auto j = nlohmann::json::parse(line, nullptr, false);
        auto r = j.is_discarded() ? Result<RunRecord>(Error{"bad"}) : RunRecord::fromJson(j);
        if (r)
            runs.push_back(std::move(r).value());
        else
            ++bad;
    }
    if (bad) warnings.push_back(path + ": skipped " + std::to_string(bad) + " unreadable journal line(s)");
    return runs;
}

Status checkJournalFits(const std::vector<RunRecord>& runs, const std::vector<std::string>& targets,
                        const std::vector<size_t>& ops, uint32_t reps)
{
    const std::set<std::string> targetSet(targets.begin(), targets.end());
    const std::set<size_t> opSet(ops.begin(), ops.end());
    for (const RunRecord& r : runs) {
        const std::string what = "the journal holds a run of op " + std::to_string(r.opIndex) + " rep " +
                                 std::to_string(r.rep) + " on " + r.target + ", ";
        if (!targetSet.count(r.target)) return Error{what + "a target this campaign does not run"};
        if (!opSet.count(r.opIndex)) return Error{what + "an op this campaign does not run"};
        if (r.rep >= reps)
            return Error{what + "beyond this campaign's " + std::to_string(reps) + " repetitions"};
    }
    return {};
}

}  // namespace faultline
