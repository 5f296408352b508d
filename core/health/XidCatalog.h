#pragma once
// The Xid catalogue (resources/xid/xid-catalog.json, compiled into the binary): per Xid and SXid
// code its mnemonic, meaning, NVIDIA's immediate and investigatory action buckets and the
// architectures it applies to, the buckets' descriptions, the recovery actions of Xid 154 and the
// register bits of Xid 74. decorate() fills an event's decoding; unknown codes stay unknown.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "../Result.h"
#include "HealthReport.h"

namespace faultline {

struct XidCatalogEntry {
    int code = 0;
    std::string mnemonic, name, meaning, immediateAction, investigatoryAction, category, decoder;
    std::vector<std::string> architectures;
};

// One group of Xid 74 register bits with what NVIDIA's NVLink workflow says about them.
struct NvlinkRegisterRule {
    int reg = 0;
    std::vector<int> bits;
    std::string cls, text;
};

class XidCatalog {
public:
    // The compiled-in catalogue (parsed once; a broken build-time file aborts the tests, not users).
    static const XidCatalog& builtIn();
    // Parses a catalogue document; `source` names it in errors.
    static Result<XidCatalog> parse(std::string_view json, const std::string& source);

    const XidCatalogEntry* xid(int code) const;
    // An SXid's own entry, else its family's (by thousands: "NVSwitch egress port"), else null.
    const XidCatalogEntry* sxid(int code) const;
    // What an action bucket asks for ("" for an unknown bucket).
    std::string bucketText(const std::string& bucket) const;
    // Xid 154's recovery action names by value ("GPU Reset Required"); "" unknown.
    std::string recoveryActionName(int value) const;
    const std::vector<NvlinkRegisterRule>& nvlinkRules() const { return m_nvlinkRules; }
    size_t xidCount() const { return m_xids.size(); }

    // Fills known, name, meaning, actions, architectures and decoded payload fields of `event`.
    void decorate(XidEvent& event) const;

private:
    std::map<int, XidCatalogEntry> m_xids, m_sxids;
    struct SxidFamily {
        int first = 0, last = 0;
        XidCatalogEntry entry;
    };
    std::vector<SxidFamily> m_sxidFamilies;
    std::map<std::string, std::string> m_buckets;
    std::map<int, std::string> m_recoveryActions;
    std::vector<NvlinkRegisterRule> m_nvlinkRules;
};

// The catalogue document as compiled in (generated from resources/xid/xid-catalog.json).
std::string_view builtInXidCatalogJson();

}  // namespace faultline
