#include "views/incident/OpenedFiles.h"

#include "core/compare/CompareResultsFile.h"

namespace faultline::views {

OpenedFiles OpenedFiles::probeOnWorker(const QStringList& paths)
{
    OpenedFiles opened;
    for (const QString& path : paths) {
        const std::string p = path.toStdString();
        auto kind = detectResultKind(p);
        if (!kind) {
            opened.errors << QString::fromStdString(kind.message());
            continue;
        }
        if (*kind == ResultKind::Incident) {
            opened.incidentPaths << path;
            continue;
        }
        OpenedResult result;
        result.path = path;
        result.kind = *kind;
        if (*kind == ResultKind::Sweep || *kind == ResultKind::Collective) {
            auto links = readLinkMatrix(p);
            if (!links) {
                opened.errors << QString::fromStdString(links.message());
                continue;
            }
            result.links = std::make_shared<const LinkMatrix>(std::move(*links));
        } else {
            auto doc = readResultDocument(p, *kind);
            if (!doc) {
                opened.errors << QString::fromStdString(doc.message());
                continue;
            }
            // A merged fleet without the root attribute (it is in its report either way).
            if (*kind == ResultKind::Campaign && doc->report.contains("fleet"))
                result.kind = doc->kind = ResultKind::Fleet;
            result.summary = summarizeResult(*doc);
            if (result.kind == ResultKind::Compare) {
                // The tiles too, so the comparison is drawn, not only tabled.
                auto report = readCompareResults(p);
                if (!report) {
                    opened.errors << QString::fromStdString(report.message());
                } else {
                    auto comparison = std::make_shared<Incident>();
                    comparison->paths = {path};
                    comparison->compare = std::move(*report);
                    comparison->buildEntries();
                    result.comparison = std::move(comparison);
                }
            }
            if (result.kind == ResultKind::Explore) {
                auto rates = rateByCondition(doc->report, p);
                if (!rates)
                    opened.errors << QString::fromStdString(rates.message());
                else
                    result.rates = std::make_shared<const RateByCondition>(std::move(*rates));
            }
            if (result.kind == ResultKind::Fleet)
                result.fleet = std::make_shared<const nlohmann::json>(std::move(doc->report));
        }
        opened.results.push_back(std::move(result));
    }
    return opened;
}

}  // namespace faultline::views
