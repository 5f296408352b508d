#include "CampaignJournal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "../Text.h"
#include "../io/SafeFiles.h"
#include "JsonFields.h"
#include "RunKeySet.h"

namespace faultline {
namespace {

std::string errnoText()
{
    return std::strerror(errno);
}

// The length of the file up to and including its last '\n' (0 when it has none).
off_t completeLength(int fd, off_t size)
{
    char buf[4096];
    off_t end = size;
    while (end > 0) {
        const off_t start = end > off_t(sizeof buf) ? end - off_t(sizeof buf) : 0;
        const ssize_t n = ::pread(fd, buf, size_t(end - start), start);
        if (n <= 0) return 0;
        for (ssize_t i = n - 1; i >= 0; --i)
            if (buf[i] == '\n') return start + i + 1;
        end = start;
    }
    return 0;
}

}  // namespace

nlohmann::json JournalHeader::toJson() const
{
    nlohmann::json j = {{"journal", "faultline-campaign"},
                        {"version", version},
                        {"trace_digest", traceDigest},
                        {"targets", targets},
                        {"ops", ops},
                        {"reps", reps},
                        {"seed", seed}};
    if (untilRate > 0) j["until_rate"] = untilRate;
    return j;
}

std::optional<JournalHeader> JournalHeader::fromJson(const nlohmann::json& j)
{
    if (!j.is_object() || j.value("journal", std::string()) != "faultline-campaign") return std::nullopt;
    try {
        JournalHeader h;
        if (!j.contains("version") || !isJsonInt32(j["version"])) return std::nullopt;
        h.version = j["version"].get<int>();
        h.traceDigest = j.value("trace_digest", std::string());
        h.targets = j.value("targets", std::vector<std::string>());
        for (const auto& op : j.value("ops", nlohmann::json::array())) {
            if (!isJsonCount(op)) return std::nullopt;
            h.ops.push_back(op.get<size_t>());
        }
        if (j.contains("reps") && (!isJsonCount(j["reps"]) || j["reps"].get<uint64_t>() > UINT32_MAX))
            return std::nullopt;
        h.reps = j.value("reps", uint32_t(0));
        if (j.contains("seed") && !isJsonCount(j["seed"])) return std::nullopt;
        h.seed = j.value("seed", uint64_t(0));
        if (j.contains("until_rate")) {
            if (!j["until_rate"].is_number() || !(j["until_rate"].get<double>() > 0)) return std::nullopt;
            h.untilRate = j["until_rate"].get<double>();
        }
        return h;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

Status CampaignJournal::open(const std::string& path, const JournalHeader& header)
{
    // The lock lives in PATH.lock (an open-file-description lock: it holds against other
    // processes and other opens in this one, and dies with its holder), which names the holder.
    // Neither file is opened through a link: one planted there would have the lock truncate, or
    // the journal append to, whatever it points at.
    const std::string lockPath = path + ".lock";
    int lockFd = -1;
    for (int attempt = 0;; ++attempt) {
        auto opened = openLockFile(lockPath);
        if (!opened) return opened.error();
        lockFd = *opened;
        struct flock lock {};
        lock.l_type = F_WRLCK;
        lock.l_whence = SEEK_SET;
        if (::fcntl(lockFd, F_OFD_SETLK, &lock) != 0) {
            char pid[32] = {};
            const ssize_t n = ::pread(lockFd, pid, sizeof pid - 1, 0);
            ::close(lockFd);
            const std::string holder =
                n > 0 ? printableText(trimmed(std::string_view(pid, size_t(n)))) : std::string();
            return fileError(path,
                             "the journal is in use by another campaign" +
                                 (holder.empty() ? std::string() : " (pid " + holder + ")") +
                                 "; one campaign writes a results file at a time",
                             ErrorCode::Usage);
        }
        // The holder removes PATH.lock when it finishes; a lock taken on a file removed meanwhile
        // locks nothing anyone else can see, so take it again on the file now at PATH.lock.
        struct stat held {
        }, now{};
        if (::fstat(lockFd, &held) == 0 && ::stat(lockPath.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
            held.st_ino == now.st_ino)
            break;
        ::close(lockFd);
        if (attempt == 100)
            return fileError(lockPath, "the journal's lock file keeps changing", ErrorCode::Io);
    }
    const std::string me = std::to_string(::getpid()) + "\n";
    if (::ftruncate(lockFd, 0) != 0 || ::pwrite(lockFd, me.data(), me.size(), 0) != ssize_t(me.size())) {
        ::close(lockFd);
        return fileError(lockPath, "cannot write the journal's lock file: " + errnoText(), ErrorCode::Io);
    }
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        const std::string why = errno == ELOOP ? "it is a symbolic link" : errnoText();
        ::close(lockFd);
        return fileError(path, "cannot open journal: " + why, ErrorCode::Io);
    }
    m_lockFd = lockFd;
    m_lockPath = lockPath;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        ::close(fd);
        return fileError(path, "cannot read journal: " + errnoText(), ErrorCode::Io);
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return fileError(path, "the journal is not a regular file", ErrorCode::Usage);
    }
    // A torn last line (the writer was killed mid-line) is cut off, so the next run starts a line.
    const off_t complete = completeLength(fd, st.st_size);
    if (complete != st.st_size && ::ftruncate(fd, complete) != 0) {
        ::close(fd);
        return fileError(path, "cannot cut the torn last line of the journal: " + errnoText(), ErrorCode::Io);
    }
    if (::lseek(fd, 0, SEEK_END) < 0) {
        ::close(fd);
        return fileError(path, "cannot seek in journal: " + errnoText(), ErrorCode::Io);
    }
    m_fd = fd;
    m_path = path;
    m_synced = complete;
    m_lastSync = std::chrono::steady_clock::now();
    if (complete == 0) {
        if (Status wrote = writeLine(header.toJson().dump() + "\n"); !wrote) return wrote;
        return syncLocked();
    }
    return {};
}

CampaignJournal::~CampaignJournal()
{
    if (m_fd >= 0) {
        (void)syncLocked();
        ::close(m_fd);
    }
    if (m_lockFd >= 0) {
        // Removed while held, so no stale lock file is left; a campaign that opened it meanwhile
        // sees the removal and takes the lock on a new one (open()).
        ::unlink(m_lockPath.c_str());
        ::close(m_lockFd);  // releases the lock
    }
}

Status CampaignJournal::writeLine(const std::string& line)
{
    const off_t before = ::lseek(m_fd, 0, SEEK_END);
    size_t written = 0;
    while (written < line.size()) {
        const ssize_t n = ::write(m_fd, line.data() + written, line.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const std::string why = n < 0 ? errnoText() : "nothing written";
            // Undo the partial line: the journal stays whole up to the last complete run.
            if (before >= 0 && ::ftruncate(m_fd, before) == 0) ::lseek(m_fd, before, SEEK_SET);
            return fileError(m_path, "cannot append to journal: " + why, ErrorCode::Io);
        }
        written += size_t(n);
    }
    // A written line survives the process being killed (it is in the page cache); only a crash of
    // the machine needs fdatasync, done at most every kSyncInterval and when the campaign ends, so
    // a campaign of many short runs is not bound by the disk's flush latency.
    if (std::chrono::steady_clock::now() - m_lastSync >= kSyncInterval) return syncLocked();
    return {};
}

Status CampaignJournal::syncLocked()
{
    if (m_fd < 0) return {};
    const off_t end = ::lseek(m_fd, 0, SEEK_END);
    if (end == m_synced) return {};
    if (::fdatasync(m_fd) != 0) {
        const std::string why = errnoText();
        // What was not flushed may not be on disk: the journal goes back to what was.
        if (::ftruncate(m_fd, m_synced) == 0) ::lseek(m_fd, m_synced, SEEK_SET);
        return fileError(m_path, "cannot flush journal to disk: " + why, ErrorCode::Io);
    }
    m_synced = end;
    m_lastSync = std::chrono::steady_clock::now();
    return {};
}

Status CampaignJournal::sync()
{
    std::lock_guard lock(m_mutex);
    return syncLocked();
}

Status CampaignJournal::append(const RunRecord& r)
{
    if (m_fd < 0) return {};
    std::lock_guard lock(m_mutex);
    return writeLine(r.toJson().dump() + "\n");
}

Status readCampaignJournal(const std::string& path, std::vector<std::string>& warnings,
                           const JournalVisitor& visit)
{
    // A FIFO or device at the journal's path would block or never end: only a regular file (or
    // none) is read.
    std::error_code ec;
    const auto kind = std::filesystem::symlink_status(path, ec).type();
    if (!ec && kind != std::filesystem::file_type::regular && kind != std::filesystem::file_type::not_found)
        return fileError(path, "the journal is not a regular file", ErrorCode::Usage);
    std::ifstream in(path);
    std::string line;
    uint64_t bad = 0, repeated = 0;
    bool first = true;
    RunKeySet seen;
    Status status;
    auto report = [&] {
        if (bad)
            warnings.push_back(path + ": skipped " + std::to_string(bad) + " unreadable journal line(s)");
        if (repeated)
            warnings.push_back(
                path + ": skipped " + std::to_string(repeated) +
                " repeated run(s) (the same target, op and repetition journaled twice); the first counts");
    };
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (first) {
            first = false;
            std::optional<JournalHeader> header = JournalHeader::fromJson(j);
            if (visit.header) status = visit.header(header);
            if (!status) break;
            if (header) continue;
        }
        auto r =
            j.is_discarded() ? Result<RunRecord>(Error{"bad", ErrorCode::Format}) : RunRecord::fromJson(j);
        if (!r) {
            ++bad;
            continue;
        }
        if (!seen.insert(r->target, r->opIndex, r->rep)) {
            ++repeated;
            continue;
        }
        if (visit.run) status = visit.run(std::move(r).value());
        if (!status) break;
    }
    if (first && visit.header && status) status = visit.header(std::nullopt);
    report();
    return status;
}

JournalContents readCampaignJournalContents(const std::string& path, std::vector<std::string>& warnings)
{
    JournalContents out;
    (void)readCampaignJournal(path, warnings,
                              {.header =
                                   [&](const std::optional<JournalHeader>& h) {
                                       out.header = h;
                                       return Status{};
                                   },
                               .run =
                                   [&](RunRecord r) {
                                       out.runs.push_back(std::move(r));
                                       return Status{};
                                   }});
    return out;
}

std::vector<RunRecord> readCampaignJournal(const std::string& path, std::vector<std::string>& warnings)
{
    return readCampaignJournalContents(path, warnings).runs;
}

Status checkRunFits(const RunRecord& r, const JournalHeader& campaign)
{
    const std::string what = "the journal holds a run of op " + std::to_string(r.opIndex) + " rep " +
                             std::to_string(r.rep) + " on " + r.target + ", ";
    if (std::find(campaign.targets.begin(), campaign.targets.end(), r.target) == campaign.targets.end())
        return Error{what + "a target this campaign does not run", ErrorCode::Usage};
    if (std::find(campaign.ops.begin(), campaign.ops.end(), r.opIndex) == campaign.ops.end())
        return Error{what + "an op this campaign does not run", ErrorCode::Usage};
    if (campaign.untilRate <= 0 && r.rep >= campaign.reps)
        return Error{what + "beyond this campaign's " + std::to_string(campaign.reps) + " repetitions",
                     ErrorCode::Usage};
    return {};
}

Status checkJournalFits(const std::vector<RunRecord>& runs, const std::vector<std::string>& targets,
                        const std::vector<size_t>& ops, uint32_t reps)
{
    JournalHeader campaign;
    campaign.targets = targets;
    campaign.ops = ops;
    campaign.reps = reps;
    for (const RunRecord& r : runs)
        if (Status st = checkRunFits(r, campaign); !st) return st;
    return {};
}

Error journalRefusal(const std::string& path, const std::string& why)
{
    return fileError(path,
                     "cannot resume: " + why + "; resume with the same trace and settings, or remove it",
                     ErrorCode::Usage);
}

Status checkJournalHeader(const std::string& path, const std::optional<JournalHeader>& header,
                          const JournalHeader& campaign, std::vector<std::string>& warnings)
{
    if (!header) {
        warnings.push_back(path +
                           ": the journal has no header (written by an older Faultline): which trace it "
                           "belongs to cannot be checked");
        return {};
    }
    const JournalHeader& h = *header;
    if (h.version > kJournalFormatVersion)
        return journalRefusal(
            path, "written by a newer Faultline (journal version " + std::to_string(h.version) + ")");
    if (h.traceDigest != campaign.traceDigest)
        return journalRefusal(path, "it belongs to another trace (content digest " + h.traceDigest +
                                        ", this trace " + campaign.traceDigest + ")");
    if ((h.untilRate > 0) != (campaign.untilRate > 0))
        return journalRefusal(path, h.untilRate > 0 ? "it was run with --until-rate, not --reps"
                                                    : "it was run with --reps, not --until-rate");
    if (h.seed != campaign.seed)
        return journalRefusal(path, "it was run with --seed " + std::to_string(h.seed) + ", not " +
                                        std::to_string(campaign.seed));
    return {};
}

Status checkJournalBelongs(const std::string& path, const JournalContents& journal,
                           const JournalHeader& campaign, std::vector<std::string>& warnings)
{
    if (Status st = checkJournalHeader(path, journal.header, campaign, warnings); !st) return st;
    for (const RunRecord& r : journal.runs)
        if (Status fits = checkRunFits(r, campaign); !fits) return journalRefusal(path, fits.message());
    return {};
}

Result<std::string> traceContentDigest(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return fileError(path, "cannot read: " + errnoText(), ErrorCode::Io);
    XXH3_state_t* state = XXH3_createState();
    XXH3_128bits_reset(state);
    std::vector<char> buf(size_t(1) << 20);
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) XXH3_128bits_update(state, buf.data(), n);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    const XXH128_hash_t h = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    if (failed) return fileError(path, "read failed while hashing", ErrorCode::Io);
    char hex[33];
    std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                  static_cast<unsigned long long>(h.low64));
    return std::string(hex);
}

}  // namespace faultline
