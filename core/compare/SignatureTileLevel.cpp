#include "SignatureTileLevel.h"

#include <optional>

#include "Divergence.h"

namespace faultline {

size_t signatureTileLevel(const Divergence& d)
{
    const auto& levels = d.tiles.levels();
    auto levelOf = [&](const SignatureEvidence& e) -> std::optional<size_t> {
        if (e.tileRows == 0) return std::nullopt;
        for (size_t k = 0; k < levels.size(); ++k)
            if (levels[k].tileRows == e.tileRows && levels[k].tileCols == e.tileCols) return k;
        return std::nullopt;
    };
    if (d.signature.kind == SignatureKind::TileClustered)
        if (auto k = levelOf(d.signature.evidence)) return *k;
    for (const SignatureFinding& f : d.signature.secondary)
        if (f.kind == SignatureKind::TileClustered)
            if (auto k = levelOf(f.evidence)) return *k;
    return 0;
}

}  // namespace faultline
