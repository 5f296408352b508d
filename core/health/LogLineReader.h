#pragma once
// Reads a kernel log line by line, plain or gzip (several gzip members back to back, as
// nvidia-bug-report.sh writes them), within bounds: a line longer than kMaxLogLineBytes keeps its
// head and is flagged as cut; more than kMaxLogBytes of text (or more than the caller's limit
// across files) is an error naming the file. A run of NUL bytes (the zero-filled blocks an unclean
// shutdown leaves in a log) ends the text before it like a line end and is skipped, however long;
// line numbers still count only '\n', so the text after the run keeps its line's number.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../Result.h"

namespace faultline {

class LogLineReader {
public:
    ~LogLineReader();
    LogLineReader(const LogLineReader&) = delete;
    LogLineReader& operator=(const LogLineReader&) = delete;

    // Opens `path` (a regular file: a FIFO or device is refused before it can block); a file
    // starting with the gzip magic is decompressed.
    static Result<std::unique_ptr<LogLineReader>> open(const std::string& path);
    // Reads from memory (fuzzing, tests); `name` names it in errors.
    static std::unique_ptr<LogLineReader> fromMemory(std::string bytes, const std::string& name);

    // The next line without its line ending ("\n" or "\r\n"). False at the end or on an error
    // (then status() says why, "FILE: problem").
    bool next(std::string& line);
    bool lastLineCut() const { return m_lastCut; }
    // The line number (1-based, counting '\n') of the line next() returned.
    uint64_t lineNumber() const { return m_lineNumber; }
    uint64_t nulBytesSkipped() const { return m_nulBytes; }
    uint64_t decodedBytes() const { return m_decodedBytes; }
    // At most `bytes` of text from this file, else the error "FILE: more than ... `what`".
    void limitBytes(uint64_t bytes, std::string what);
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
    uint64_t m_newlines = 0;  // '\n' consumed so far
    bool m_inNulRun = false;
    uint64_t m_nulBytes = 0;
    std::optional<uint64_t> m_limit;  // besides kMaxLogBytes
    std::string m_limitWhat;
    bool m_lastCut = false;
    Status m_status;
};

// Opens `path` for reading only when it is a regular file: checkRegularInput's message for
// anything else, and opened without blocking, so a FIFO put there after the check cannot block.
Result<std::FILE*> openRegularInput(const std::string& path);

}  // namespace faultline
