#include "CompareText.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "../compare/CompareJson.h"

namespace faultline {

std::string compareText(const CompareReport& report)
{
    std::ostringstream out;
    uint64_t beyondTensors = 0, identical = 0;
    for (const Divergence& d : report.tensors) {
        if (d.beyondTolerance) ++beyondTensors;
        if (!d.mismatches) ++identical;
    }
    out << "suspect   " << report.suspect << "\nreference " << report.reference << "\ntolerance "
        << report.tolerance.toString() << "\n"
        << report.tensors.size() << " tensor(s) compared: " << beyondTensors << " beyond tolerance, "
        << identical << " bit-identical\n\n";
    char line[600];
    for (const Divergence& d : report.tensors) {
        if (!d.mismatches) continue;
        std::snprintf(line, sizeof line, "%s %s  %s %s\n", d.beyondTolerance ? "✗" : "~", d.name.c_str(),
                      std::string(dtypeName(d.dtype)).c_str(), shapeToString(d.shape).c_str());
        out << line;
        std::snprintf(line, sizeof line, "    %llu of %llu elements differ, %llu beyond tolerance; ",
                      static_cast<unsigned long long>(d.mismatches),
                      static_cast<unsigned long long>(d.elements),
                      static_cast<unsigned long long>(d.beyondTolerance));
        out << line << maxErrorText(d);
        if (d.nanIntroduced || d.infIntroduced)
            out << " (" << d.nanIntroduced << " NaN, " << d.infIntroduced << " Inf)";
        out << "\n    signature: " << signatureKindName(d.signature.kind);
        std::snprintf(line, sizeof line, " (%.0f%%) ", 100.0 * d.signature.confidence);
        out << line << d.signature.detail << "\n";
        out << "      what: " << signatureWhatName(d.signature.what)
            << ", where: " << signatureWhereName(d.signature.where) << "\n";
        for (const SignatureFinding& f : d.signature.secondary)
            out << "      also: " << signatureKindName(f.kind) << " — " << f.detail << "\n";
        if (d.region)
            out << "    region: rows [" << d.region->rowBegin << ", " << d.region->rowEnd << ") cols ["
                << d.region->colBegin << ", " << d.region->colEnd << ")\n";
        // Bits that flipped, most frequent first (at most 6).
        std::vector<std::pair<uint64_t, unsigned>> bits;
        for (unsigned b = 0; b < d.bits.flips.size(); ++b)
            if (d.bits.flips[b]) bits.push_back({d.bits.flips[b], b});
        std::sort(bits.rbegin(), bits.rend());
        if (!bits.empty()) {
            out << "    bits:";
            for (size_t i = 0; i < bits.size() && i < 6; ++i)
                out << " " << bits[i].second << "(" << bitFieldName(d.dtype, bits[i].second) << ")×"
                    << bits[i].first;
            out << "\n";
        }
        for (size_t i = 0; i < d.top.size() && i < 3; ++i) {
            const ElementDiff& e = d.top[i];
            std::snprintf(line, sizeof line, "    [%llu, %llu] %.9g vs %.9g  %s vs %s  %llu ulp\n",
                          static_cast<unsigned long long>(e.row), static_cast<unsigned long long>(e.col),
                          e.suspect, e.reference,
                          bitsToHex(e.suspectBits, bitLayout(d.dtype).totalBits).c_str(),
                          bitsToHex(e.referenceBits, bitLayout(d.dtype).totalBits).c_str(),
                          static_cast<unsigned long long>(e.ulp));
            out << line;
        }
        out << "\n";
    }
    out << recordsText(report);
    for (const PairError& e : report.notComparable)
        out << "not comparable: " << e.name << ": " << e.message << "\n";
    for (const NotCompared& n : report.notCompared)
        out << "not compared: " << n.name << ": " << n.reason << "\n";
    for (const UnpairedTensor& u : report.unpaired)
        out << "unpaired (" << u.side << " only): " << u.name << "\n";
    for (const PairError& e : report.errors) out << "error: " << e.name << ": " << e.message << "\n";
    return out.str();
}

std::string recordsText(const CompareReport& report)
{
    if (report.records.empty()) return {};
    std::ostringstream out;
    uint64_t differ = 0;
    for (const RecordDivergence& d : report.records) differ += d.mismatches > 0;
    out << report.records.size() << " other dataset(s) compared for equality: " << differ << " differ, "
        << report.records.size() - differ << " identical\n\n";
    for (const RecordDivergence& d : report.records) {
        if (d.mismatches == 0) continue;
        out << "≠ " << d.name << "  " << d.type << " "
            << (d.nullSpace ? "null dataspace" : shapeToString(d.shape)) << "\n    " << d.mismatches << " of "
            << d.values << " values differ, in " << d.mismatchedElements << " of " << d.elements
            << " elements";
        if (d.fields.size() > 1 || (d.fields.size() == 1 && !d.fields[0].name.empty())) {
            out << ":";
            for (const RecordFieldCount& f : d.fields)
                if (f.mismatches) out << " " << f.name << " " << f.mismatches;
        }
        out << "\n";
        for (size_t i = 0; i < d.differences.size() && i < 5; ++i) {
            const RecordDifference& x = d.differences[i];
            // An array member's values are numbered within the element.
            bool array = false;
            for (const RecordFieldCount& f : d.fields)
                if (f.name == x.field) array = f.values > d.elements;
            out << "    [" << x.element << "]";
            if (!x.field.empty()) out << " " << x.field;
            if (array) out << "[" << x.value << "]";
            out << ": " << x.suspect << " vs " << x.reference << "\n";
        }
        out << "\n";
    }
    return out.str();
}

}  // namespace faultline
