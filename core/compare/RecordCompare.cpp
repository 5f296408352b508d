#include "RecordCompare.h"

#include <algorithm>

#include "../Text.h"
#include "Pairing.h"
#include "TensorComparer.h"

namespace faultline {

Result<RecordDivergence> compareRecords(const TensorFile& suspect, size_t suspectIndex,
                                        const TensorFile& reference, size_t referenceIndex,
                                        const RecordCompareOptions& options)
{
    if (suspectIndex >= suspect.records().size())
        return fileError(suspect.path(), "no record dataset #" + std::to_string(suspectIndex));
    if (referenceIndex >= reference.records().size())
        return fileError(reference.path(), "no record dataset #" + std::to_string(referenceIndex));
    const RecordInfo& s = suspect.records()[suspectIndex];
    const RecordInfo& r = reference.records()[referenceIndex];
    if (!s.notComparable.empty())
        return fileError(suspect.path(), "dataset '" + s.name + "': " + s.notComparable);
    if (!r.notComparable.empty())
        return fileError(reference.path(), "dataset '" + r.name + "': " + r.notComparable);
    if (std::string why = recordsComparable(s, r); !why.empty())
        return Error{s.name + ": " + why, ErrorCode::Format};

    RecordDivergence d;
    d.name = s.name;
    d.suspectName = s.name;
    d.referenceName = r.name;
    d.type = s.type;
    d.shape = s.shape;
    d.nullSpace = s.nullSpace;
    d.elements = s.elementCount();
    const uint64_t perElement = s.valuesPerElement();
    d.values = d.elements * perElement;
    for (const RecordField& f : s.fields) d.fields.push_back({f.name, f.type, d.elements * f.count, 0});
    if (d.values == 0) return d;

    const uint64_t block = std::max<uint64_t>(1, options.blockValues / perElement);
    RecordBlock bs, br;
    for (uint64_t first = 0; first < d.elements; first += block) {
        if (options.cancel != nullptr && options.cancel->load()) return cancelledError(kCompareCancelled);
        const uint64_t n = std::min(block, d.elements - first);
        if (Status st = suspect.readRecords(suspectIndex, first, n, &bs); !st) return st.error();
        if (Status st = reference.readRecords(referenceIndex, first, n, &br); !st) return st.error();
        for (uint64_t e = 0; e < n; ++e) {
            bool differs = false;
            for (size_t f = 0; f < s.fields.size(); ++f) {
                const RecordField& field = s.fields[f];
                for (uint64_t k = 0; k < field.count; ++k) {
                    const uint64_t i = e * field.count + k;
                    if (bs.columns[f].equal(field, i, br.columns[f])) continue;
                    differs = true;
                    ++d.mismatches;
                    ++d.fields[f].mismatches;
                    if (d.differences.size() < options.shown)
                        d.differences.push_back({first + e, field.name, k,
                                                 printableText(recordValueText(field, bs.columns[f], i)),
                                                 printableText(recordValueText(field, br.columns[f], i))});
                }
            }
            if (differs) ++d.mismatchedElements;
        }
    }
    return d;
}

}  // namespace faultline
