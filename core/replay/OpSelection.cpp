#include "OpSelection.h"

#include <map>
#include <set>

#include "../golden/OpRegistry.h"

namespace faultline {

Result<std::vector<size_t>> selectOpIndices(const Trace& trace, const std::string& selection)
{
    std::set<size_t> chosen;
    std::set<size_t> indices;
    for (const TraceOp& op : trace.ops) indices.insert(op.index);
    if (selection.empty()) {
        chosen = indices;
    } else {
        size_t pos = 0;
        while (pos <= selection.size()) {
            size_t next = selection.find(',', pos);
            if (next == std::string::npos) next = selection.size();
            const std::string piece = selection.substr(pos, next - pos);
            pos = next + 1;
            if (piece.empty()) continue;
            if (piece.find_first_not_of("0123456789-") == std::string::npos) {
                const size_t dash = piece.find('-');
                try {
                    const size_t lo = std::stoull(piece.substr(0, dash));
                    const size_t hi = dash == std::string::npos ? lo : std::stoull(piece.substr(dash + 1));
                    if (hi < lo)
                        return Error{"op selection '" + piece + "': range ends before it starts",
                                     ErrorCode::Usage};
                    bool any = false;
                    for (size_t i : indices)
                        if (i >= lo && i <= hi) any = chosen.insert(i).second || true;
                    if (!any)
                        return Error{"op selection '" + piece + "': no such op in the trace",
                                     ErrorCode::Usage};
                } catch (...) {
                    return Error{"op selection '" + piece + "' is not an index or range", ErrorCode::Usage};
                }
            } else {
                bool any = false;
                for (const TraceOp& op : trace.ops)
                    if (op.op == piece) any = chosen.insert(op.index).second || true;
                if (!any)
                    return Error{"op selection '" + piece + "': the trace has no op of that kind",
                                 ErrorCode::Usage};
            }
        }
    }
    return std::vector<size_t>(chosen.begin(), chosen.end());
}

Result<std::vector<size_t>> selectOps(const Trace& trace, const std::string& selection,
                                      std::vector<std::string>& warnings)
{
    auto chosen = selectOpIndices(trace, selection);
    if (!chosen) return chosen.error();
    std::vector<size_t> out;
    std::map<std::string, uint64_t> skipped;
    for (size_t i : *chosen) {
        const TraceOp* op = nullptr;
        for (const TraceOp& o : trace.ops)
            if (o.index == i) op = &o;
        if (!golden::findGoldenOp(op->op)) {
            ++skipped[op->op];
            continue;
        }
        out.push_back(i);
    }
    for (const auto& [name, n] : skipped)
        warnings.push_back("skipped " + std::to_string(n) + " '" + name +
                           "' op(s): the golden model cannot run them");
    if (out.empty()) return Error{"no replayable ops selected", ErrorCode::Usage};
    return out;
}

}  // namespace faultline
