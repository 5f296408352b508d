#pragma once
// The campaign journal (RESULTS.h5.journal.jsonl): one run record per line, appended and
// flushed to disk (fdatasync) before the next run starts, so a killed orchestrator loses at most
// the run in flight. readCampaignJournal and checkJournalFits (Campaign.h) read it back.
#include <mutex>
#include <string>

#include "../Result.h"
#include "Campaign.h"

namespace faultline {

class CampaignJournal {
public:
    CampaignJournal() = default;
    CampaignJournal(const CampaignJournal&) = delete;
    CampaignJournal& operator=(const CampaignJournal&) = delete;
    ~CampaignJournal();
    // Opens `path` for appending (created if missing). Errors name the file.
    Status open(const std::string& path);
    // Appends one record and flushes it; without an open file it does nothing. Thread-safe.
    Status append(const RunRecord& r);

private:
    int m_fd = -1;
    std::string m_path;
    std::mutex m_mutex;
};

}  // namespace faultline
