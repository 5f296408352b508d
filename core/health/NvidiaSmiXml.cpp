#include "NvidiaSmiXml.h"

#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "../Text.h"
#include "BusId.h"
#include "LogLineReader.h"
#include "LogText.h"

namespace faultline {
namespace {

// "N/A", "[N/A]", "Not Supported", "[Not Supported]", "Unknown Error", "": no value.
bool absent(const std::string& v)
{
    return v.empty() || v == "N/A" || v == "[N/A]" || v == "Not Supported" || v == "[Not Supported]" ||
           v == "Unknown Error" || v == "[Unknown Error]" ||
           v == "Requested functionality has been deprecated";
}

std::string textOf(const pugi::xml_node& n)
{
    const std::string v = validUtf8(trimmed(n.child_value()), 4096);
    return absent(v) ? std::string() : v;
}

std::string childText(const pugi::xml_node& n, const char* name)
{
    return textOf(n.child(name));
}

// The leading number of "33 C", "70.12 W", "1980 MHz", "2560 bank(s)", "12".
std::optional<double> numberOf(const std::string& v)
{
    if (v.empty()) return std::nullopt;
    const char* begin = v.c_str();
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(begin, &end);
    if (end == begin || errno == ERANGE) return std::nullopt;
    return d;
}

std::optional<uint64_t> countOf(const std::string& v)
{
    if (v.empty() || !std::isdigit(static_cast<unsigned char>(v.front()))) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const unsigned long long c = std::strtoull(v.c_str(), &end, 10);
    if (errno == ERANGE) return std::nullopt;
    return uint64_t(c);
}

std::optional<bool> yesNo(const std::string& v)
{
    if (v == "Yes" || v == "yes" || v == "True" || v == "Enabled") return true;
    if (v == "No" || v == "no" || v == "False" || v == "Disabled") return false;
    return std::nullopt;
}

// Leaf counters under `n`, flattened with '.': "sram_correctable", "single_bit.device_memory".
void flattenCounts(const pugi::xml_node& n, const std::string& prefix, std::map<std::string, uint64_t>& out,
                   int depth = 0)
{
    if (depth > 4) return;
    for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
        if (c.type() != pugi::node_element) continue;
        const std::string name = validUtf8(c.name(), 128);
        const std::string key = prefix.empty() ? name : prefix + "." + name;
        if (c.first_child() && c.first_child().type() == pugi::node_element) {
            flattenCounts(c, key, out, depth + 1);
        } else if (auto v = countOf(textOf(c))) {
            out[key] = *v;
        }
    }
}

// Totals of a volatile/aggregate block: single/double-bit "total" where the driver gives it,
// else the sums of the correctable and uncorrectable counters.
void eccTotals(const std::map<std::string, uint64_t>& m, std::optional<uint64_t>& corrected,
               std::optional<uint64_t>& uncorrected)
{
    if (auto it = m.find("single_bit.total"); it != m.end()) corrected = it->second;
    if (auto it = m.find("double_bit.total"); it != m.end()) uncorrected = it->second;
    uint64_t c = 0, u = 0;
    bool anyC = false, anyU = false;
    // Drivers that split SRAM's uncorrectable errors into parity and SEC-DED may also give their sum.
    const bool sramSum = m.count("sram_uncorrectable") > 0;
    for (const auto& [k, v] : m) {
        const std::string leaf = k.substr(k.rfind('.') + 1);
        if (sramSum && (k == "sram_uncorrectable_parity" || k == "sram_uncorrectable_secded")) continue;
        if (k.find("uncorrectable") != std::string::npos) {
            u += v;
            anyU = true;
        } else if (leaf.find("correctable") != std::string::npos) {
            c += v;
            anyC = true;
        }
    }
    if (!corrected && anyC) corrected = c;
    if (!uncorrected && anyU) uncorrected = u;
}

void readEcc(const pugi::xml_node& gpu, GpuCounters& c)
{
    if (auto mode = yesNo(childText(gpu.child("ecc_mode"), "current_ecc"))) c.eccEnabled = mode;
    const pugi::xml_node ecc = gpu.child("ecc_errors");
    if (!ecc) return;
    flattenCounts(ecc.child("volatile"), "", c.eccVolatile);
    flattenCounts(ecc.child("aggregate"), "", c.eccAggregate);
    eccTotals(c.eccVolatile, c.eccCorrectedVolatile, c.eccUncorrectedVolatile);
    eccTotals(c.eccAggregate, c.eccCorrectedAggregate, c.eccUncorrectedAggregate);
    flattenCounts(ecc.child("aggregate_uncorrectable_sram_sources"), "", c.sramUncorrectableSources);
    // The flag sits in <aggregate> (and, in some drivers, directly in <ecc_errors>).
    for (const pugi::xml_node where : {ecc.child("aggregate"), ecc})
        if (auto f = yesNo(childText(where, "sram_threshold_exceeded"))) c.sramThresholdExceeded = f;
}

void readRetiredPages(const pugi::xml_node& gpu, GpuCounters& c)
{
    const pugi::xml_node rp = gpu.child("retired_pages");
    if (!rp) return;
    c.retiredPagesSingleBit = countOf(childText(rp.child("multiple_single_bit_retirement"), "retired_count"));
    c.retiredPagesDoubleBit = countOf(childText(rp.child("double_bit_retirement"), "retired_count"));
    for (const char* name : {"pending_retirement", "pending_blacklist"})
        if (auto p = yesNo(childText(rp, name))) c.retiredPagesPending = p;
}

void readRemappedRows(const pugi::xml_node& gpu, GpuCounters& c)
{
    const pugi::xml_node rr = gpu.child("remapped_rows");
    if (!rr || !rr.child("remapped_row_corr")) return;  // absent, or just "N/A"
    c.remappedRowsAvailable = true;
    c.remappedRowsCorrectable = countOf(childText(rr, "remapped_row_corr"));
    c.remappedRowsUncorrectable = countOf(childText(rr, "remapped_row_unc"));
    c.remapPending = yesNo(childText(rr, "remapped_row_pending"));
    c.remapFailure = yesNo(childText(rr, "remapped_row_failure"));
    const pugi::xml_node h = rr.child("row_remapper_histogram");
    for (pugi::xml_node b = h.first_child(); b; b = b.next_sibling()) {
        std::string name = validUtf8(b.name(), 128);
        const std::string prefix = "row_remapper_histogram_";
        if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
        if (auto v = countOf(textOf(b))) c.rowRemapperHistogram[name] = *v;
    }
}

void readTelemetry(const pugi::xml_node& gpu, GpuCounters& c)
{
    const pugi::xml_node t = gpu.child("temperature");
    c.gpuTemperatureC = numberOf(childText(t, "gpu_temp"));
    c.memoryTemperatureC = numberOf(childText(t, "memory_temp"));
    for (const char* section : {"gpu_power_readings", "power_readings"}) {
        const pugi::xml_node p = gpu.child(section);
        if (!p) continue;
        for (const char* draw : {"power_draw", "average_power_draw", "instant_power_draw"})
            if (!c.powerDrawW) c.powerDrawW = numberOf(childText(p, draw));
        for (const char* limit : {"current_power_limit", "power_limit", "enforced_power_limit"})
            if (!c.powerLimitW) c.powerLimitW = numberOf(childText(p, limit));
    }
    for (pugi::xml_node k = gpu.child("clocks").first_child(); k; k = k.next_sibling())
        if (k.type() == pugi::node_element)
            if (auto v = numberOf(textOf(k))) c.clocksMHz[validUtf8(k.name(), 128)] = *v;
}

// What the root says about every GPU of the file (read once: looking each up per <gpu> is
// quadratic in the number of <gpu> elements when they are missing).
struct RootFields {
    std::string timestamp, driverVersion, cudaVersion;
};

GpuHealthSnapshot readGpu(const pugi::xml_node& gpu, const RootFields& root, const std::string& source)
{
    GpuHealthSnapshot s;
    s.source = source;
    s.timestamp = root.timestamp;
    GpuIdentity& id = s.identity;
    id.driverVersion = root.driverVersion;
    id.cudaVersion = root.cudaVersion;
    id.product = childText(gpu, "product_name");
    id.architecture = childText(gpu, "product_architecture");
    id.serial = childText(gpu, "serial");
    id.uuid = childText(gpu, "uuid");
    id.boardPartNumber = childText(gpu, "board_part_number");
    id.gpuPartNumber = childText(gpu, "gpu_part_number");
    id.vbiosVersion = childText(gpu, "vbios_version");
    const pugi::xml_node inforom = gpu.child("inforom_version");
    id.inforomImageVersion = childText(inforom, "img_version");
    id.inforomOemObject = childText(inforom, "oem_object");
    id.inforomEccObject = childText(inforom, "ecc_object");
    id.busId = normalizeBusId(childText(gpu.child("pci"), "pci_bus_id"));
    if (id.busId.empty()) id.busId = normalizeBusId(gpu.attribute("id").value());
    readEcc(gpu, s.counters);
    readRetiredPages(gpu, s.counters);
    readRemappedRows(gpu, s.counters);
    readTelemetry(gpu, s.counters);
    s.recoveryAction = childText(gpu, "gpu_recovery_action");
    return s;
}

size_t lineAt(std::string_view text, size_t offset)
{
    offset = std::min(offset, text.size());
    return 1 + size_t(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

}  // namespace

Result<std::vector<GpuHealthSnapshot>> parseNvidiaSmiXml(std::string_view xml, const std::string& source)
{
    if (xml.size() > kMaxXmlBytes)
        return fileError(source, "larger than " + std::to_string(kMaxXmlBytes >> 20) +
                                     " MiB; not nvidia-smi -q -x output");
    // An internal DTD subset that declares entities (billion laughs, external files) is refused;
    // nvidia-smi writes only a DOCTYPE naming its DTD.
    if (const size_t doctype = xml.find("<!DOCTYPE"); doctype != std::string_view::npos) {
        const size_t root = xml.find("<nvidia_smi_log");
        const std::string_view prolog =
            xml.substr(doctype, root == std::string_view::npos ? std::string_view::npos : root - doctype);
        if (const size_t ent = prolog.find("<!ENTITY"); ent != std::string_view::npos)
            return Error{source + ":" + std::to_string(lineAt(xml, doctype + ent)) +
                             ": the DOCTYPE declares entities; refused (nvidia-smi never writes any)",
                         ErrorCode::Format};
    }
    // The DOM costs about 64 bytes per node: bound the tags before parsing.
    if (const size_t tags = size_t(std::count(xml.begin(), xml.end(), '<')); tags > kMaxXmlTags)
        return fileError(source, "more than " + std::to_string(kMaxXmlTags) +
                                     " XML tags; refused (not nvidia-smi -q -x output)");
    pugi::xml_document doc;
    // No parse_doctype, no entity expansion beyond the five predefined ones and character references.
    const unsigned options = pugi::parse_default & ~pugi::parse_doctype;
    const pugi::xml_parse_result r = doc.load_buffer(xml.data(), xml.size(), options, pugi::encoding_utf8);
    if (!r)
        return Error{source + ":" + std::to_string(lineAt(xml, size_t(std::max<ptrdiff_t>(0, r.offset)))) +
                         ": malformed XML: " + r.description(),
                     ErrorCode::Format};
    const pugi::xml_node root = doc.child("nvidia_smi_log");
    if (!root) {
        const pugi::xml_node first = doc.document_element();
        return fileError(source, std::string("not nvidia-smi -q -x output (the root element is <") +
                                     (first ? first.name() : "") + ">, not <nvidia_smi_log>)");
    }
    const RootFields fields{childText(root, "timestamp"), childText(root, "driver_version"),
                            childText(root, "cuda_version")};
    std::vector<GpuHealthSnapshot> out;
    for (pugi::xml_node gpu = root.child("gpu"); gpu; gpu = gpu.next_sibling("gpu")) {
        if (out.size() == kMaxGpus)
            return fileError(source, "more than " + std::to_string(kMaxGpus) +
                                         " <gpu> elements; refused (nvidia-smi -q -x lists one per GPU)");
        out.push_back(readGpu(gpu, fields, source));
    }
    if (out.empty()) return fileError(source, "nvidia-smi -q -x output without a <gpu> element");
    return out;
}

Result<std::vector<GpuHealthSnapshot>> readNvidiaSmiXml(const std::string& path)
{
    auto file = openRegularInput(path);
    if (!file) return file.error();
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(*file, &std::fclose);
    std::string data;
    char buf[64 * 1024];
    for (;;) {
        const size_t got = std::fread(buf, 1, sizeof buf, in.get());
        data.append(buf, got);
        if (data.size() > kMaxXmlBytes)
            return fileError(path, "larger than " + std::to_string(kMaxXmlBytes >> 20) +
                                       " MiB; not nvidia-smi -q -x output");
        if (got < sizeof buf) break;
    }
    if (std::ferror(in.get())) return fileError(path, "read error", ErrorCode::Io);
    return parseNvidiaSmiXml(data, path);
}

}  // namespace faultline
