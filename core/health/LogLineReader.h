#pragma once
// Reads a kernel log line by line, plain or gzip (several gzip members back to back, as
// nvidia-bug-report.sh writes them), within bounds: a line longer than kMaxLogLineBytes keeps its
// head and is flagged as cut; more than kMaxLogBytes of text is an error naming the file.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

class LogLineReader {
public:
    ~LogLineReader();
    LogLineReader(const LogLineReader&) = delete;
    LogLineReader& operator=(const LogLineReader&) = delete;

    // Opens `path`; a file starting with the gzip magic is decompressed.
    static Result<std::unique_ptr<LogLineReader>> open(const std::string& path);
    // Reads from memory (fuzzing, tests); `name` names it in errors.
    static std::unique_ptr<LogLineReader> fromMemory(std::string bytes, const std::string& name);

    // The next line without its line ending ("\n" or "\r\n"). False at the end or on an error
    // (then status() says why, "FILE: problem").
    bool next(std::string& line);
    bool lastLineCut() const { return m_lastCut; }
    uint64_t lineNumber() const { return m_lineNumber; }
    const Status& status() const { return m_status; }
    bool gzip() const { return m_gzip; }

private:
    LogLineReader() = default;
    // Appends decoded bytes to m_buffer; false at the end of input or on an error.
    bool fill();
    bool readRaw();
    bool inflateMore();

    std::string m_path;
    std::FILE* m_file = nullptr;
    std::string m_memory;  // fromMemory: all raw bytes
    size_t m_memoryPos = 0;
    bool m_fromMemory = false;
    bool m_rawEof = false;

    bool m_gzip = false;
    struct Inflater;
    std::unique_ptr<Inflater> m_inflater;
    std::vector<unsigned char> m_raw;  // raw bytes not yet consumed
    size_t m_rawPos = 0;
    uint64_t m_rawOffset = 0;  // offset of m_raw[0] in the file

    std::string m_buffer;  // decoded bytes not yet returned
    size_t m_bufferPos = 0;
    uint64_t m_decodedBytes = 0;
    bool m_end = false;
    uint64_t m_lineNumber = 0;
    bool m_lastCut = false;
    Status m_status;
};

}  // namespace faultline
