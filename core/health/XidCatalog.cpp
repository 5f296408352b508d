#include "XidCatalog.h"
#include "../JsonFields.h"

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "XidPayloadDecoder.h"

namespace faultline {
namespace {

using nlohmann::json;

XidCatalogEntry readEntry(const json& j)
{
    XidCatalogEntry e;
    e.code = j.at("code").get<int>();
    e.mnemonic = jsonString(j, "mnemonic");
    e.name = jsonString(j, "name");
    e.meaning = jsonString(j, "meaning");
    e.immediateAction = jsonString(j, "immediate_action");
    e.investigatoryAction = jsonString(j, "investigatory_action");
    e.category = jsonString(j, "category");
    e.decoder = jsonString(j, "decoder");
    if (auto it = j.find("architectures"); it != j.end() && it->is_array())
        for (const json& a : *it)
            if (a.is_string()) e.architectures.push_back(a.get<std::string>());
    return e;
}

}  // namespace

Result<XidCatalog> XidCatalog::parse(std::string_view document, const std::string& source)
{
    const json j = json::parse(document, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return fileError(source, "the Xid catalogue is not a JSON object");
    if (jsonString(j, "format") != "faultline-xid-catalog")
        return fileError(source,
                         "not a Faultline Xid catalogue (\"format\" is not \"faultline-xid-catalog\")");
    try {
        XidCatalog c;
        for (const json& x : j.at("xids")) {
            XidCatalogEntry e = readEntry(x);
            c.m_xids[e.code] = std::move(e);
        }
        if (j.contains("sxids"))
            for (const json& x : j.at("sxids")) {
                XidCatalogEntry e = readEntry(x);
                c.m_sxids[e.code] = std::move(e);
            }
        if (j.contains("sxid_families"))
            for (const json& f : j.at("sxid_families")) {
                SxidFamily fam;
                fam.first = f.at("first").get<int>();
                fam.last = f.at("last").get<int>();
                fam.entry.name = jsonString(f, "name") + " error";
                fam.entry.meaning = "An error of the " + jsonString(f, "name") +
                                    " (this SXid has no entry of its own in the catalogue; see the Fabric "
                                    "Manager User Guide).";
                fam.entry.category = "nvswitch";
                c.m_sxidFamilies.push_back(std::move(fam));
            }
        for (auto& [k, v] : j.at("buckets").items())
            if (v.is_string()) c.m_buckets[k] = v.get<std::string>();
        if (j.contains("recovery_actions"))
            for (auto& [k, v] : j.at("recovery_actions").items())
                if (v.is_string()) c.m_recoveryActions[std::stoi(k)] = v.get<std::string>();
        if (j.contains("nvlink_xid74_registers"))
            for (const json& r : j.at("nvlink_xid74_registers")) {
                NvlinkRegisterRule rule;
                rule.reg = r.at("register").get<int>();
                rule.bits = r.at("bits").get<std::vector<int>>();
                rule.cls = jsonString(r, "class");
                rule.text = jsonString(r, "text");
                c.m_nvlinkRules.push_back(std::move(rule));
            }
        return c;
    } catch (const std::exception& e) {
        return fileError(source, std::string("malformed Xid catalogue: ") + e.what());
    }
}

const XidCatalog& XidCatalog::builtIn()
{
    static const XidCatalog catalog = [] {
        auto c = parse(builtInXidCatalogJson(), "resources/xid/xid-catalog.json (built in)");
        if (!c) {
            std::cerr << "faultline: " << c.message() << "\n";
            std::abort();
        }
        return std::move(c).value();
    }();
    return catalog;
}

const XidCatalogEntry* XidCatalog::xid(int code) const
{
    auto it = m_xids.find(code);
    return it == m_xids.end() ? nullptr : &it->second;
}

const XidCatalogEntry* XidCatalog::sxid(int code) const
{
    if (auto it = m_sxids.find(code); it != m_sxids.end()) return &it->second;
    for (const SxidFamily& f : m_sxidFamilies)
        if (code >= f.first && code <= f.last) return &f.entry;
    return nullptr;
}

std::string XidCatalog::bucketText(const std::string& bucket) const
{
    auto it = m_buckets.find(bucket);
    return it == m_buckets.end() ? std::string() : it->second;
}

std::string XidCatalog::recoveryActionName(int value) const
{
    auto it = m_recoveryActions.find(value);
    return it == m_recoveryActions.end() ? std::string() : it->second;
}

void XidCatalog::decorate(XidEvent& e) const
{
    const bool sx = e.kind == XidEvent::Kind::SXid;
    const XidCatalogEntry* entry = sx ? sxid(e.code) : xid(e.code);
    const char* what = sx ? "SXid " : "Xid ";
    if (!entry) {
        e.known = false;
        e.name = "unknown";
        e.meaning = std::string(what) + std::to_string(e.code) +
                    " is not in Faultline's Xid catalogue; see NVIDIA's Xid catalogue for this driver";
        e.immediateAction.clear();
        e.investigatoryAction.clear();
        e.architectures.clear();
    } else {
        e.known = true;
        e.mnemonic = entry->mnemonic;
        e.category = entry->category;
        e.name = entry->name;
        e.meaning = entry->meaning;
        e.immediateAction = entry->immediateAction;
        e.investigatoryAction = entry->investigatoryAction;
        e.architectures = entry->architectures;
    }
    e.decoded =
        sx || !entry ? std::vector<XidDecodedField>{} : decodeXidPayload(*this, entry->decoder, e.message);
}

}  // namespace faultline
