#include "ResultFile.h"

#include <sys/stat.h>

#include <array>
#include <fstream>

#include "../TensorFile.h"
#include "../evidence/MinisignKey.h"
#include "../evidence/TarReader.h"
#include "../io/SafeFiles.h"
#include "../replay/CampaignResultsFile.h"
#include "../replay/TensorLoad.h"

namespace faultline {

namespace {

constexpr size_t kJsonLimit = size_t(64) << 20;
constexpr const char* kCaseSchema = "faultline-evidence-case";
constexpr const char* kHealthFormat = "faultline-health";
constexpr const char* kExploreFormat = "faultline-explore";

Result<nlohmann::json> parseJson(const std::string& text, const std::string& path, const std::string& what)
{
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded()) return fileError(path, what + " is not JSON");
    return doc;
}

bool isCase(const nlohmann::json& j)
{
    return j.is_object() && j.value("schema", std::string()) == kCaseSchema;
}

// case.json of an evidence bundle archive: the entry "DIR/case.json" (or "case.json").
Result<std::optional<nlohmann::json>> caseOfArchive(const std::string& path)
{
    auto tar = TarReader::open(path);
    if (!tar) return tar.error();
    for (;;) {
        auto entry = tar->next();
        if (!entry) return entry.error();
        if (!*entry) return std::optional<nlohmann::json>();
        const std::string& name = (*entry)->name;
        const size_t slash = name.find('/');
        const std::string rest = slash == std::string::npos ? name : name.substr(slash + 1);
        if (rest != "case.json" || (*entry)->type != '0') continue;
        if ((*entry)->size > kJsonLimit) return fileError(path, name + " is larger than 64 MiB");
        std::string text;
        if (Status read = tar->readData([&](const char* p, size_t n) { text.append(p, n); }); !read)
            return read.error();
        auto doc = parseJson(text, path, name);
        if (!doc) return doc.error();
        if (!isCase(*doc)) return std::optional<nlohmann::json>();
        return std::optional<nlohmann::json>(std::move(*doc));
    }
}

Result<nlohmann::json> caseOfDirectory(const std::string& dir)
{
    const std::string casePath = dir + "/case.json";
    struct stat st {};
    if (::stat(casePath.c_str(), &st) != 0)
        return fileError(dir, "a directory that is not an evidence bundle (no case.json)", ErrorCode::Usage);
    auto text = readSmallFile(casePath, kJsonLimit);
    if (!text) return text.error();
    auto doc = parseJson(*text, casePath, "case.json");
    if (!doc) return doc.error();
    if (!isCase(*doc))
        return fileError(casePath,
                         std::string("not an evidence case (no \"schema\": \"") + kCaseSchema + "\")");
    return doc;
}

// The first bytes of a regular file.
Result<std::string> headOf(const std::string& path, size_t n)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return fileError(path, "cannot be read", ErrorCode::Io);
    std::string head(n, '\0');
    in.read(head.data(), std::streamsize(n));
    head.resize(size_t(in.gcount()));
    return head;
}

struct Detected {
    ResultKind kind = ResultKind::Incident;
    std::optional<nlohmann::json> doc;  // health: the document; evidence: case.json
};

Result<Detected> detect(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return fileError(path, "no such file or directory", ErrorCode::Usage);
    if (S_ISDIR(st.st_mode)) {
        auto c = caseOfDirectory(path);
        if (!c) return c.error();
        return Detected{ResultKind::Evidence, std::move(*c)};
    }
    if (Status regular = checkRegularInput(path); !regular) return regular.error();
    auto head = headOf(path, 512);
    if (!head) return head.error();
    const size_t first = head->find_first_not_of(" \t\r\n");
    if (first != std::string::npos && (*head)[first] == '{') {
        // A JSON document: `health --json` and `explore --json` are those Faultline opens.
        if (size_t(st.st_size) > kJsonLimit) return fileError(path, "a JSON document larger than 64 MiB");
        auto text = readSmallFile(path, kJsonLimit);
        if (!text) return text.error();
        auto doc = parseJson(*text, path, "the file");
        if (!doc) return doc.error();
        if (doc->is_object() && doc->value("format", std::string()) == kHealthFormat)
            return Detected{ResultKind::Health, std::move(*doc)};
        if (doc->is_object() && doc->value("format", std::string()) == kExploreFormat)
            return Detected{ResultKind::Explore, std::move(*doc)};
        return fileError(path, std::string("a JSON document Faultline does not open (no \"format\": \"") +
                                   kHealthFormat + "\" or \"" + kExploreFormat + "\")");
    }
    auto padded = *head;
    padded.resize(512, '\0');
    if (padded.compare(257, 5, "ustar") == 0) {
        auto c = caseOfArchive(path);
        if (!c) return c.error();
        if (!*c) return fileError(path, "a tar archive that is not an evidence bundle (no case.json)");
        return Detected{ResultKind::Evidence, std::move(**c)};
    }
    auto file = openTensorFile(path);
    if (!file) return file.error();
    const auto& attributes = (*file)->attributes();
    const auto format = attributes.find("faultline_format");
    if (format == attributes.end()) return Detected{};
    const auto fleet = attributes.find("fleet");
    if (format->second == "campaign")
        return Detected{
            fleet != attributes.end() && fleet->second == "1" ? ResultKind::Fleet : ResultKind::Campaign,
            std::nullopt};
    if (format->second == "compare") return Detected{ResultKind::Compare, std::nullopt};
    if (format->second == "sweep") return Detected{ResultKind::Sweep, std::nullopt};
    if (format->second == "collective") return Detected{ResultKind::Collective, std::nullopt};
    if (format->second == "explore") return Detected{ResultKind::Explore, std::nullopt};
    return Detected{};  // a trace (or a format of a later Faultline, which the trace reader names)
}

// report_json of a version-1 HDF5 results file.
Result<nlohmann::json> reportJsonOf(const std::string& path)
{
    auto file = openTensorFile(path);
    if (!file) return file.error();
    const auto& attributes = (*file)->attributes();
    const auto version = attributes.find("faultline_version");
    if (version == attributes.end() || version->second != "1")
        return fileError(path, "results file version " +
                                   (version == attributes.end() ? std::string("(none)") : version->second) +
                                   " is not supported (this build reads version 1)");
    auto index = (*file)->find("report_json");
    if (!index) return fileError(path, "no report_json in the results file");
    if ((*file)->tensors()[*index].byteCount() > kJsonLimit)
        return fileError(path, "report_json is larger than 64 MiB");
    auto bytes = loadTensor(**file, "report_json");
    if (!bytes) return bytes.error();
    const auto* begin = reinterpret_cast<const char*>(bytes->data.data());
    return parseJson(std::string(begin, bytes->data.size()), path, "report_json");
}

}  // namespace

std::string_view resultKindName(ResultKind kind)
{
    switch (kind) {
        case ResultKind::Incident:
            return "incident";
        case ResultKind::Campaign:
            return "campaign";
        case ResultKind::Fleet:
            return "fleet";
        case ResultKind::Compare:
            return "compare";
        case ResultKind::Sweep:
            return "sweep";
        case ResultKind::Collective:
            return "collective";
        case ResultKind::Health:
            return "health";
        case ResultKind::Evidence:
            return "evidence";
        case ResultKind::Explore:
            return "explore";
    }
    return "incident";
}

Result<ResultKind> detectResultKind(const std::string& path)
{
    auto detected = detect(path);
    if (!detected) return detected.error();
    return detected->kind;
}

Result<ResultDocument> readResultDocument(const std::string& path, ResultKind kind)
{
    ResultDocument doc;
    doc.kind = kind;
    doc.path = path;
    switch (kind) {
        case ResultKind::Incident:
            return fileError(path, "a trace or snapshot, not a results file", ErrorCode::Usage);
        case ResultKind::Campaign:
        case ResultKind::Fleet: {
            auto report = readCampaignResults(path);
            if (!report) return report.error();
            doc.report = std::move(*report);
            return doc;
        }
        case ResultKind::Compare:
        case ResultKind::Sweep:
        case ResultKind::Collective: {
            auto report = reportJsonOf(path);
            if (!report) return report.error();
            doc.report = std::move(*report);
            return doc;
        }
        case ResultKind::Explore: {
            auto detected = detect(path);
            if (!detected) return detected.error();
            if (detected->kind != kind)
                return fileError(
                    path, "is a " + std::string(resultKindName(detected->kind)) + " file, not explore");
            if (detected->doc) {  // `explore --json` saved to a file
                doc.report = std::move(*detected->doc);
                return doc;
            }
            auto report = reportJsonOf(path);
            if (!report) return report.error();
            doc.report = std::move(*report);
            return doc;
        }
        case ResultKind::Health:
        case ResultKind::Evidence: {
            auto detected = detect(path);
            if (!detected) return detected.error();
            if (detected->kind != kind)
                return fileError(path, "is a " + std::string(resultKindName(detected->kind)) + " file, not " +
                                           std::string(resultKindName(kind)));
            doc.report = std::move(*detected->doc);
            if (kind == ResultKind::Evidence) {
                auto check = verifyBundle(path);
                if (!check) return check.error();
                doc.checkText = bundleCheckText(*check);
                doc.check = std::move(*check);
            }
            return doc;
        }
    }
    return fileError(path, "unknown kind");
}

}  // namespace faultline
