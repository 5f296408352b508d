#include "CompareResultsFile.h"

#include <cstdio>

#include "../TensorFile.h"
#include "../io/Hdf5File.h"
#include "../io/SnapshotWriter.h"
#include "CompareJson.h"
#include "CompareJsonReader.h"

namespace faultline {

Result<CompareResultsWriter> CompareResultsWriter::create(const std::string& path)
{
    auto w = SnapshotWriter::create(path);
    if (!w) return w.error();
    CompareResultsWriter r;
    r.m_writer = std::make_unique<SnapshotWriter>(std::move(*w));
    return r;
}

CompareResultsWriter::CompareResultsWriter(CompareResultsWriter&&) noexcept = default;
CompareResultsWriter& CompareResultsWriter::operator=(CompareResultsWriter&&) noexcept = default;
CompareResultsWriter::~CompareResultsWriter() = default;

Status CompareResultsWriter::addPair(size_t index, const Divergence& d)
{
    SnapshotWriter& writer = *m_writer;
    char group[32];
    std::snprintf(group, sizeof group, "pairs/%06zu", index);
    m_groupByName[d.name] = group;
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = std::move(s);
    };
    check(writer.setGroupAttribute(group, "name", d.name));
    check(writer.setGroupAttribute(group, "dtype", std::string(dtypeName(d.dtype))));
    check(writer.setGroupAttribute(group, "rows", int64_t(d.rows)));
    check(writer.setGroupAttribute(group, "cols", int64_t(d.cols)));
    if (!st || !d.tiles.hasCounts()) return st;
    const auto& levels = d.tiles.levels();
    for (size_t l = 0; l < levels.size() && st; ++l) {
        const TileLevel& level = levels[l];
        const std::string g = std::string(group) + "/tiles/" + std::to_string(l);
        check(writer.setGroupAttribute(g, "tile_rows", int64_t(level.tileRows)));
        check(writer.setGroupAttribute(g, "tile_cols", int64_t(level.tileCols)));
        check(writer.setGroupAttribute(g, "grid_rows", int64_t(level.gridRows)));
        check(writer.setGroupAttribute(g, "grid_cols", int64_t(level.gridCols)));
        const std::vector<uint64_t> shape = {level.gridRows, level.gridCols};
        TensorWriteOptions opt;
        opt.gzipLevel = level.tileCount() > 4096 ? 4 : 0;
        check(writer.writeTensor(g + "/mismatches", DType::UInt64, shape, level.mismatches.data(), opt));
        check(writer.writeTensor(g + "/beyond", DType::UInt64, shape, level.beyond.data(), opt));
        check(writer.writeTensor(g + "/anomalies", DType::UInt64, shape, level.anomalies.data(), opt));
        check(writer.writeTensor(g + "/max_abs_error", DType::Float64, shape, level.maxAbsError.data(), opt));
    }
    return st;
}

Status CompareResultsWriter::finish(const CompareReport& report)
{
    SnapshotWriter& writer = *m_writer;
    Status st;
    auto check = [&st](Status s) {
        if (st && !s) st = std::move(s);
    };
    check(writer.setRootAttribute("faultline_format", std::string("compare")));
    check(writer.setRootAttribute("faultline_version", int64_t(kCompareResultsVersion)));
    check(writer.setRootAttribute("suspect", report.suspect));
    check(writer.setRootAttribute("reference", report.reference));
    check(writer.setRootAttribute("tolerance", report.tolerance.toString()));
    // Names and strings from the files may be any bytes: replaced, never thrown on.
    const std::string doc =
        compareReportToJson(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    check(writer.writeTensor("report_json", DType::UInt8, {doc.size()}, doc.data()));
    for (size_t rank = 0; rank < report.tensors.size() && st; ++rank) {
        auto g = m_groupByName.find(report.tensors[rank].name);
        if (g == m_groupByName.end())
            return fileError(writer.path(),
                             "tensor '" + report.tensors[rank].name + "' was not added to the results");
        check(writer.setGroupAttribute(g->second, "report_rank", int64_t(rank)));
    }
    if (!st) return st;
    return writer.close();
}

Status writeCompareResults(const std::string& path, const CompareReport& report)
{
    auto w = CompareResultsWriter::create(path);
    if (!w) return w.error();
    for (size_t i = 0; i < report.tensors.size(); ++i)
        if (Status s = w->addPair(i, report.tensors[i]); !s) return s;
    return w->finish(report);
}

namespace {

constexpr uint64_t kMaxReportJsonBytes = uint64_t(64) << 20;
constexpr uint64_t kMaxLevelTiles = uint64_t(1) << 22;

template <typename T>
Result<std::vector<T>> readWhole(const TensorFile& file, const std::string& name, DType dtype, uint64_t count)
{
    const auto index = file.find(name);
    if (!index) return fileError(file.path(), "no dataset '" + name + "'", ErrorCode::Format);
    const TensorInfo& info = file.tensors()[*index];
    if (info.dtype != dtype || info.elementCount() != count)
        return fileError(file.path(),
                         "dataset '" + name + "' is not " + std::string(dtypeName(dtype)) + " with " +
                             std::to_string(count) + " elements",
                         ErrorCode::Format);
    std::vector<T> out(static_cast<size_t>(count));
    if (Status st = file.read(*index, 0, count, out.data()); !st) return st.error();
    return out;
}

// The tensor name of each stored pair group ("pairs/NNNNNN" -> its name attribute).
Result<std::map<std::string, std::string>> pairNames(const std::string& path, const TensorFile& file)
{
    std::map<std::string, std::string> names;
    for (const TensorInfo& t : file.tensors()) {
        const std::string suffix = "/tiles/0/mismatches";
        if (t.name.rfind("pairs/", 0) == 0 && t.name.size() > suffix.size() &&
            t.name.compare(t.name.size() - suffix.size(), suffix.size(), suffix) == 0)
            names[t.name.substr(0, t.name.size() - suffix.size())];
    }
    if (names.empty()) return names;
    std::vector<std::string> groups;
    for (const auto& entry : names) groups.push_back(entry.first);
    auto attributes = readHdf5GroupStringAttributes(path, groups, "name");
    if (!attributes) return attributes.error();
    size_t k = 0;
    for (auto& [group, name] : names) {
        const std::optional<std::string>& attr = (*attributes)[k++];
        if (!attr) return fileError(path, "group '" + group + "' has no name attribute", ErrorCode::Format);
        name = *attr;
    }
    return names;
}

}  // namespace

Result<CompareReport> readCompareResults(const std::string& path)
{
    auto opened = openTensorFile(path);
    if (!opened) return opened.error();
    const TensorFile& file = **opened;
    const auto& attributes = file.attributes();
    const auto format = attributes.find("faultline_format");
    if (format == attributes.end() || format->second != "compare")
        return fileError(path, "not a compare results file (no faultline_format=\"compare\")",
                         ErrorCode::Format);
    const auto version = attributes.find("faultline_version");
    if (version == attributes.end() || version->second != std::to_string(kCompareResultsVersion))
        return fileError(path,
                         "compare results version " +
                             (version == attributes.end() ? std::string("(none)") : version->second) +
                             " is not supported (this build reads version " +
                             std::to_string(kCompareResultsVersion) + ")",
                         ErrorCode::Format);
    const auto jsonIndex = file.find("report_json");
    if (!jsonIndex) return fileError(path, "no report_json in the results file", ErrorCode::Format);
    const uint64_t jsonBytes = file.tensors()[*jsonIndex].elementCount();
    if (jsonBytes > kMaxReportJsonBytes)
        return fileError(path, "report_json is larger than 64 MiB", ErrorCode::Format);
    auto bytes = readWhole<char>(file, "report_json", DType::UInt8, jsonBytes);
    if (!bytes) return bytes.error();
    const nlohmann::json doc = nlohmann::json::parse(bytes->begin(), bytes->end(), nullptr, false);
    if (!doc.is_object()) return fileError(path, "report_json is not a JSON object", ErrorCode::Format);
    auto report = compareReportFromJson(doc, path);
    if (!report) return report.error();

    // Every tensor's tile geometry, from its "tile" member (null: no tiles, an empty tensor).
    const nlohmann::json& tensors = doc["tensors"];
    std::map<std::string, size_t> tensorOf;
    for (size_t i = 0; i < report->tensors.size(); ++i) {
        Divergence& d = report->tensors[i];
        tensorOf[d.name] = i;
        const nlohmann::json& tile = tensors[i]["tile"];
        if (tile.is_null()) continue;
        if (!tile.is_object() || !tile.contains("rows") || !tile.contains("cols") ||
            !tile["rows"].is_number_unsigned() || !tile["cols"].is_number_unsigned() ||
            tile["rows"].get<uint64_t>() == 0 || tile["cols"].get<uint64_t>() == 0 ||
            tile["rows"].get<uint64_t>() > UINT32_MAX || tile["cols"].get<uint64_t>() > UINT32_MAX)
            return fileError(path, "tensor '" + d.name + "': report_json has no valid tile size",
                             ErrorCode::Format);
        TileOptions options;
        options.baseTileRows = uint32_t(tile["rows"].get<uint64_t>());
        options.baseTileCols = uint32_t(tile["cols"].get<uint64_t>());
        options.maxTilesPerSide = UINT32_MAX;
        d.tiles = TilePyramid::forMatrix(d.rows, d.cols, options);
    }
    // The stored counts, where the comparison found mismatches.
    auto names = pairNames(path, file);
    if (!names) return names.error();
    for (const auto& [group, name] : *names) {
        const auto found = tensorOf.find(name);
        if (found == tensorOf.end())
            return fileError(path,
                             "group '" + group + "' names tensor '" + name + "', which the report lacks",
                             ErrorCode::Format);
        Divergence& d = report->tensors[found->second];
        if (d.tiles.levels().empty())
            return fileError(path, "tensor '" + name + "' has stored tiles but no tile size in report_json",
                             ErrorCode::Format);
        for (size_t l = 0; l < d.tiles.levels().size(); ++l) {
            const uint64_t n = d.tiles.levels()[l].tileCount();
            if (n > kMaxLevelTiles)
                return fileError(path,
                                 "tensor '" + name + "': more than 2^22 tiles in level " + std::to_string(l),
                                 ErrorCode::Format);
            const std::string g = group + "/tiles/" + std::to_string(l) + "/";
            auto mismatches = readWhole<uint64_t>(file, g + "mismatches", DType::UInt64, n);
            if (!mismatches) return mismatches.error();
            auto beyond = readWhole<uint64_t>(file, g + "beyond", DType::UInt64, n);
            if (!beyond) return beyond.error();
            auto anomalies = readWhole<uint64_t>(file, g + "anomalies", DType::UInt64, n);
            if (!anomalies) return anomalies.error();
            auto maxAbs = readWhole<double>(file, g + "max_abs_error", DType::Float64, n);
            if (!maxAbs) return maxAbs.error();
            d.tiles.setStoredCounts(l, std::move(*mismatches), std::move(*beyond), std::move(*anomalies),
                                    std::move(*maxAbs));
        }
    }
    return report;
}

}  // namespace faultline
