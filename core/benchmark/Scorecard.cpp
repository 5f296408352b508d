#include "Scorecard.h"

#include <algorithm>

#include "../compare/TensorComparer.h"
#include "../compare/Tolerance.h"
#include "Detectors.h"

namespace faultline {

SignatureAccuracy signatureAccuracy(const Scorecard& s, const std::string& group)
{
    SignatureAccuracy a;
    for (const CaseResult& c : s.cases) {
        const bool in = group == "single_pattern" ? (c.spec.group == "single" || c.spec.group == "bit_sweep")
                                                  : c.spec.group == group;
        if (!in) continue;
        ++a.cases;
        a.kind += c.gotKind == c.truthKind ? 1 : 0;
        a.what += c.gotWhat == c.truthWhat ? 1 : 0;
        a.where += c.gotWhere == c.truthWhere ? 1 : 0;
    }
    return a;
}

Result<Scorecard> runBenchmark(const BenchmarkOptions& options, const BenchmarkProgress& progress)
{
    auto tolerance = parseTolerance(options.tolerance);
    if (!tolerance) return tolerance.error();
    if (tolerance->kind == ToleranceKind::Bound)
        return Error{
            "benchmark: --tolerance bound needs an op's error bound; use exact, ulp:N, abs:X or rel:X",
            ErrorCode::Usage};
    auto specs = patternSpecs(options.patterns);
    if (!specs) return specs.error();

    Scorecard card;
    card.options = options;
    const auto detectors = standardDetectors();
    for (const auto& d : detectors) card.detectors.push_back({d->name(), d->describe()});
    CompareOptions compare;
    compare.tolerance = *tolerance;
    compare.threads = options.threads;
    compare.topK = 4;
    const TensorComparer comparer(compare);
    for (size_t i = 0; i < specs->size(); ++i) {
        if (progress && !progress(i, specs->size())) return cancelledError("benchmark cancelled");
        auto c = generatePattern((*specs)[i]);
        if (!c) return c.error();
        auto d = comparer.compare(c->spec.dtype, c->healthy.shape, c->suspect.data.data(),
                                  c->healthy.data.data(), patternCaseId(c->spec));
        if (!d) return d.error();
        CaseResult r;
        r.spec = c->spec;
        r.planted = c->planted;
        r.truthWhat = c->what;
        r.truthWhere = c->where;
        r.truthKind = c->kind;
        if (c->planted > 0 && d->beyondTolerance == 0) {
            // Everything planted is within the tolerance (a low bit under ulp:4, abs:X): by the
            // user's own definition that is rounding, whatever the bits.
            r.truthWhat = SignatureWhat::Rounding;
            r.truthWhere = SignatureWhere::None;
            r.truthKind = SignatureKind::Rounding;
        }
        r.gotWhat = d->signature.what;
        r.gotWhere = d->signature.where;
        r.gotKind = d->signature.kind;
        r.detail = d->signature.detail;
        const DetectorInput in{*c, *d};
        for (const auto& det : detectors) r.flagged.push_back(det->flags(in));
        card.cases.push_back(std::move(r));
    }
    if (progress) progress(specs->size(), specs->size());
    return card;
}

}  // namespace faultline
