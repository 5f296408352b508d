#include "views/incident/Incident.h"
#include "views/shell/ViewText.h"

#include <QFileInfo>
#include <algorithm>

namespace faultline::views {
namespace {

QString fileName(const QString& path)
{
    return QFileInfo(path).fileName();
}

TensorVerdict tensorVerdictOf(const Divergence& d)
{
    if (d.mismatches == 0) return TensorVerdict::Identical;
    if (d.beyondTolerance == 0) return TensorVerdict::Within;
    return TensorVerdict::Beyond;
}

}  // namespace

QString tensorVerdictText(TensorVerdict v)
{
    switch (v) {
        case TensorVerdict::Identical:
            return QStringLiteral("identical");
        case TensorVerdict::Within:
            return QStringLiteral("within");
        case TensorVerdict::Beyond:
            return QStringLiteral("beyond");
        case TensorVerdict::Differs:
            return QStringLiteral("differs");
        case TensorVerdict::Error:
            return QStringLiteral("error");
        case TensorVerdict::NotComparable:
            return QStringLiteral("not comparable");
        case TensorVerdict::NotCompared:
            return QStringLiteral("not compared");
        case TensorVerdict::Unpaired:
            return QStringLiteral("unpaired");
        case TensorVerdict::Listed:
            return QStringLiteral("listed");
    }
    return {};
}

void IncidentEntry::setVerdict(BisectVerdict v)
{
    opVerdict = v;
    verdict = QString::fromStdString(nameOf(v));
}

void IncidentEntry::setVerdict(TensorVerdict v)
{
    tensorVerdict = v;
    verdict = tensorVerdictText(v);
}

QString Incident::title() const
{
    QStringList parts;
    if (hasTrace()) {
        const bool peer = bisect && !bisect->peer.empty();
        parts << (peer ? QStringLiteral("%1 (%2 vs %3 and golden)")
                             .arg(fileName(tracePath), suspectLabel, qs(bisect->peer))
                       : QStringLiteral("%1 (%2 vs golden)").arg(fileName(tracePath), suspectLabel));
    }
    if (hasPair())
        parts << QStringLiteral("%1 vs %2")
                     .arg(fileName(qs(suspectFile->path())), fileName(qs(referenceFile->path())));
    if (singleFile) parts << fileName(qs(singleFile->path()));
    return parts.join(QStringLiteral(" + "));
}

QString Incident::summary() const
{
    QStringList parts;
    if (bisect) {
        int divergent = 0;
        for (const BisectOp& b : bisect->ops)
            if (b.verdict == BisectVerdict::Divergent) ++divergent;
        QString s = QStringLiteral("%1 ops bisected on %2, %3 divergent")
                        .arg(bisect->ops.size())
                        .arg(suspectLabel)
                        .arg(divergent);
        if (bisect->firstDivergentOp) s += QStringLiteral(", first: op %1").arg(*bisect->firstDivergentOp);
        parts << s;
    }
    if (compare) {
        int beyond = 0;
        for (const Divergence& d : compare->tensors)
            if (d.beyondTolerance > 0) ++beyond;
        parts << QStringLiteral("%1 tensors compared (%2), %3 beyond tolerance")
                     .arg(compare->tensors.size())
                     .arg(qs(compare->tolerance.toString()))
                     .arg(beyond);
    }
    if (singleFile)
        parts << QStringLiteral("%1: %2 tensors (open a second file to compare)")
                     .arg(fileName(qs(singleFile->path())))
                     .arg(singleFile->tensors().size());
    return parts.join(QStringLiteral(" · "));
}

std::vector<int> Incident::entriesOf(EntrySource source) const
{
    std::vector<int> out;
    for (const IncidentEntry& e : entries)
        if (e.source == source) out.push_back(e.id);
    return out;
}

QString Incident::divergentOpSelection() const
{
    QStringList ops;
    for (const IncidentEntry& e : entries)
        if (e.source == EntrySource::TraceOp && e.opVerdict == BisectVerdict::Divergent)
            ops << QString::number(e.opIndex);
    return ops.join(QLatin1Char(','));
}

void Incident::buildEntries()
{
    entries.clear();
    firstDivergentEntry.reset();
    storyEntry.reset();
    auto add = [this](IncidentEntry e) {
        e.id = int(entries.size());
        entries.push_back(std::move(e));
    };

    if (bisect && trace) {
        const std::string suspect = suspectLabel.toStdString();
        for (const BisectOp& b : bisect->ops) {
            IncidentEntry e;
            e.source = EntrySource::TraceOp;
            e.name = qs(b.name.empty() ? b.op + " " + std::to_string(b.index) : b.name);
            e.opKind = qs(b.op);
            e.opIndex = b.index;
            e.setVerdict(b.verdict);
            e.detail = qs(b.detail);
            if (b.divergence) {
                e.divergence = &*b.divergence;
                e.hasInfo = true;
                e.dtype = b.divergence->dtype;
                e.shape = b.divergence->shape;
            }
            e.judge = qs(bisectJudgeText(b));
            for (const TraceOp& op : trace->ops) {
                if (op.index != b.index) continue;
                auto outs = op.outputs.find(suspect);
                if (outs != op.outputs.end() && b.output < outs->second.size())
                    e.suspectTensor = outs->second[b.output];
                if (b.judge == BisectJudge::Peer && b.output < b.peerOutputs.size()) {
                    e.referenceTensor = b.peerOutputs[b.output];
                    e.peerLabel = qs(b.judgeLabel);
                }
            }
            if (!e.hasInfo && trace->file && !e.suspectTensor.empty())
                if (auto i = trace->file->find(e.suspectTensor)) {
                    const TensorInfo& t = trace->file->tensors()[*i];
                    e.hasInfo = true;
                    e.dtype = t.dtype;
                    e.shape = t.shape;
                }
            const bool first = bisect->firstDivergentOp && *bisect->firstDivergentOp == b.index;
            add(std::move(e));
            if (first) firstDivergentEntry = int(entries.size()) - 1;
        }
    }

    if (compare) {
        std::vector<const Divergence*> sorted;
        for (const Divergence& d : compare->tensors) sorted.push_back(&d);
        std::sort(sorted.begin(), sorted.end(),
                  [](const Divergence* a, const Divergence* b) { return a->name < b->name; });
        for (const Divergence* d : sorted) {
            IncidentEntry e;
            e.name = qs(d->name);
            e.setVerdict(tensorVerdictOf(*d));
            e.detail = qs(d->signature.detail);
            e.divergence = d;
            e.hasInfo = true;
            e.dtype = d->dtype;
            e.shape = d->shape;
            e.suspectTensor = d->suspectName;
            e.referenceTensor = d->referenceName;
            add(std::move(e));
        }
        for (const PairError& pe : compare->errors) {
            IncidentEntry e;
            e.name = qs(pe.name);
            e.setVerdict(TensorVerdict::Error);
            e.detail = qs(pe.message);
            add(std::move(e));
        }
        for (const PairError& pe : compare->notComparable) {
            IncidentEntry e;
            e.name = qs(pe.name);
            e.setVerdict(TensorVerdict::NotComparable);
            e.detail = qs(pe.message);
            add(std::move(e));
        }
        for (const NotCompared& n : compare->notCompared) {
            IncidentEntry e;
            e.name = qs(n.name);
            e.setVerdict(TensorVerdict::NotCompared);
            e.detail = qs(n.reason);
            add(std::move(e));
        }
        // Datasets that are not tensors, compared for equality.
        for (const RecordDivergence& d : compare->records) {
            IncidentEntry e;
            e.name = qs(d.name);
            e.setVerdict(d.mismatches ? TensorVerdict::Differs : TensorVerdict::Identical);
            QString detail = qs(d.type);
            if (d.mismatches) {
                detail += QStringLiteral(": %1 of %2 values differ").arg(d.mismatches).arg(d.values);
                if (!d.differences.empty())
                    detail += QStringLiteral(" (first: %1 vs %2)")
                                  .arg(qs(d.differences[0].suspect), qs(d.differences[0].reference));
            }
            e.detail = detail;
            add(std::move(e));
        }
        for (const UnpairedTensor& u : compare->unpaired) {
            IncidentEntry e;
            e.name = qs(u.name);
            e.setVerdict(TensorVerdict::Unpaired);
            e.detail = QStringLiteral("only in the %1 file").arg(qs(u.side));
            const TensorFile* f = u.side == "suspect" ? suspectFile.get() : referenceFile.get();
            if (f)
                if (auto i = f->find(u.name)) {
                    e.hasInfo = true;
                    e.dtype = f->tensors()[*i].dtype;
                    e.shape = f->tensors()[*i].shape;
                }
            add(std::move(e));
        }
    }

    if (singleFile) {
        for (const TensorInfo& t : singleFile->tensors()) {
            IncidentEntry e;
            e.name = qs(t.name);
            e.setVerdict(TensorVerdict::Listed);
            e.detail = t.kind.empty() ? QString() : qs(t.kind);
            e.hasInfo = true;
            e.dtype = t.dtype;
            e.shape = t.shape;
            e.suspectTensor = t.name;
            add(std::move(e));
        }
    }

    if (firstDivergentEntry) {
        storyEntry = firstDivergentEntry;
    } else if (compare && !compare->tensors.empty() && compare->tensors.front().beyondTolerance > 0) {
        for (const IncidentEntry& e : entries)
            if (e.divergence == &compare->tensors.front()) storyEntry = e.id;
    } else if (!entries.empty()) {
        storyEntry = 0;
    }
}

}  // namespace faultline::views
