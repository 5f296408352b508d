#include "LogLineReader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "../io/SafeFiles.h"
#include "HealthReport.h"

namespace faultline {

namespace {
constexpr size_t kChunk = 64 * 1024;
}

struct LogLineReader::Inflater {
    z_stream z{};
    bool initialised = false;
    bool memberEnded = false;  // between members: the next bytes must be a gzip header or padding
    ~Inflater()
    {
        if (initialised) inflateEnd(&z);
    }
};

LogLineReader::~LogLineReader()
{
    if (m_file) std::fclose(m_file);
}

Result<std::FILE*> openRegularInput(const std::string& path)
{
    if (Status s = checkRegularInput(path); !s) return s.error();
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return fileError(path, std::string("cannot open: ") + std::strerror(errno), ErrorCode::Io);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return fileError(path, "not a regular file", ErrorCode::Usage);
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    std::FILE* f = ::fdopen(fd, "rb");
    if (!f) {
        ::close(fd);
        return fileError(path, std::string("cannot open: ") + std::strerror(errno), ErrorCode::Io);
    }
    return f;
}

void LogLineReader::limitBytes(uint64_t bytes, std::string what)
{
    m_limit = bytes;
    m_limitWhat = std::move(what);
}

Result<std::unique_ptr<LogLineReader>> LogLineReader::open(const std::string& path)
{
    std::unique_ptr<LogLineReader> r(new LogLineReader);
    r->m_path = path;
    auto file = openRegularInput(path);
    if (!file) return file.error();
    r->m_file = *file;
    if (!r->readRaw() && !r->m_status.ok()) return r->m_status.error();
    r->m_gzip = r->m_raw.size() >= 2 && r->m_raw[0] == 0x1f && r->m_raw[1] == 0x8b;
    return r;
}

std::unique_ptr<LogLineReader> LogLineReader::fromMemory(std::string bytes, const std::string& name)
{
    std::unique_ptr<LogLineReader> r(new LogLineReader);
    r->m_path = name;
    r->m_fromMemory = true;
    r->m_memory = std::move(bytes);
    r->readRaw();
    r->m_gzip = r->m_raw.size() >= 2 && r->m_raw[0] == 0x1f && r->m_raw[1] == 0x8b;
    return r;
}

// Reads the next raw chunk into m_raw (keeping unconsumed bytes); false at the end of the file.
bool LogLineReader::readRaw()
{
    if (m_rawEof) return false;
    if (m_rawPos > 0) {
        m_rawOffset += m_rawPos;
        m_raw.erase(m_raw.begin(), m_raw.begin() + static_cast<std::ptrdiff_t>(m_rawPos));
        m_rawPos = 0;
    }
    const size_t old = m_raw.size();
    m_raw.resize(old + kChunk);
    size_t got = 0;
    if (m_fromMemory) {
        got = std::min(kChunk, m_memory.size() - m_memoryPos);
        std::memcpy(m_raw.data() + old, m_memory.data() + m_memoryPos, got);
        m_memoryPos += got;
    } else {
        got = std::fread(m_raw.data() + old, 1, kChunk, m_file);
        if (got < kChunk && std::ferror(m_file)) {
            m_status = fileError(m_path, std::string("read error: ") + std::strerror(errno), ErrorCode::Io);
            m_raw.resize(old);
            m_rawEof = true;
            return false;
        }
    }
    m_raw.resize(old + got);
    if (got == 0) m_rawEof = true;
    return got > 0;
}

bool LogLineReader::inflateMore()
{
    if (!m_inflater) {
        m_inflater = std::make_unique<Inflater>();
        if (inflateInit2(&m_inflater->z, 16 + MAX_WBITS) != Z_OK) {
            m_status = fileError(m_path, "cannot initialise zlib");
            return false;
        }
        m_inflater->initialised = true;
    }
    Inflater& in = *m_inflater;
    unsigned char out[kChunk];
    for (;;) {
        if (m_rawPos == m_raw.size() && !readRaw()) {
            if (!m_status.ok()) return false;
            if (!in.memberEnded)
                m_status = fileError(m_path, "truncated gzip data (the file ends inside a gzip member)");
            return false;
        }
        if (in.memberEnded) {
            // Zero padding after the last member is tolerated; anything else must be a new member.
            while (m_rawPos < m_raw.size() && m_raw[m_rawPos] == 0) ++m_rawPos;
            if (m_rawPos == m_raw.size()) continue;
            if (m_raw.size() - m_rawPos < 2 && !m_rawEof) {
                readRaw();
                continue;
            }
            if (m_raw.size() - m_rawPos < 2 || m_raw[m_rawPos] != 0x1f || m_raw[m_rawPos + 1] != 0x8b) {
                m_status = fileError(m_path, "data after the last gzip member at byte " +
                                                 std::to_string(m_rawOffset + m_rawPos) + " is not gzip");
                return false;
            }
            inflateReset(&in.z);
            in.memberEnded = false;
        }
        in.z.next_in = m_raw.data() + m_rawPos;
        in.z.avail_in = static_cast<uInt>(m_raw.size() - m_rawPos);
        in.z.next_out = out;
        in.z.avail_out = sizeof out;
        const int rc = inflate(&in.z, Z_NO_FLUSH);
        m_rawPos = m_raw.size() - in.z.avail_in;
        const size_t produced = sizeof out - in.z.avail_out;
        if (rc == Z_STREAM_END) {
            in.memberEnded = true;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            m_status = fileError(m_path, std::string("corrupt gzip data near byte ") +
                                             std::to_string(m_rawOffset + m_rawPos) + ": " +
                                             (in.z.msg ? in.z.msg : "zlib error " + std::to_string(rc)));
            return false;
        }
        if (produced > 0) {
            m_buffer.append(reinterpret_cast<const char*>(out), produced);
            return true;
        }
    }
}

bool LogLineReader::fill()
{
    if (m_end) return false;
    if (m_bufferPos > 0) {
        m_buffer.erase(0, m_bufferPos);
        m_bufferPos = 0;
    }
    const size_t before = m_buffer.size();
    bool more;
    if (m_gzip) {
        more = inflateMore();
    } else {
        if (m_rawPos == m_raw.size()) readRaw();
        more = m_rawPos < m_raw.size();
        if (more) {
            m_buffer.append(reinterpret_cast<const char*>(m_raw.data() + m_rawPos), m_raw.size() - m_rawPos);
            m_rawPos = m_raw.size();
        }
    }
    m_decodedBytes += m_buffer.size() - before;
    if (m_decodedBytes > kMaxLogBytes) {
        m_status = fileError(m_path,
                             "more than " + std::to_string(kMaxLogBytes >> 20) + " MiB of log text; refused");
        more = false;
    } else if (m_limit && m_decodedBytes > *m_limit) {
        m_status = fileError(m_path, "more than " + m_limitWhat + "; refused");
        more = false;
    }
    if (!more) m_end = true;
    return more;
}

bool LogLineReader::next(std::string& line)
{
    line.clear();
    m_lastCut = false;
    bool any = false;
    for (;;) {
        if (m_bufferPos == m_buffer.size() && !fill()) {
            if (!m_status.ok()) return false;
            if (!any) return false;
            break;
        }
        if (m_inNulRun) {
            const size_t start = m_bufferPos;
            while (m_bufferPos < m_buffer.size() && m_buffer[m_bufferPos] == '\0') ++m_bufferPos;
            m_nulBytes += m_bufferPos - start;
            if (m_bufferPos == m_buffer.size()) continue;
            m_inNulRun = false;
        }
        const char* begin = m_buffer.data() + m_bufferPos;
        const size_t avail = m_buffer.size() - m_bufferPos;
        const void* nl = std::memchr(begin, '\n', avail);
        size_t take = nl ? size_t(static_cast<const char*>(nl) - begin) : avail;
        const void* nul = std::memchr(begin, '\0', take);
        if (nul) take = size_t(static_cast<const char*>(nul) - begin);
        const size_t room = kMaxLogLineBytes > line.size() ? kMaxLogLineBytes - line.size() : 0;
        if (take > room) m_lastCut = true;
        line.append(begin, std::min(take, room));
        any = any || take > 0;
        m_bufferPos += take;
        if (nul) {
            // The text before a NUL run is a line of its own; the run is skipped.
            m_inNulRun = true;
            if (any) break;
            continue;
        }
        if (nl) {
            ++m_bufferPos;
            ++m_newlines;
            m_lineNumber = m_newlines;
            any = true;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            return true;
        }
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    m_lineNumber = m_newlines + 1;
    return true;
}

}  // namespace faultline
