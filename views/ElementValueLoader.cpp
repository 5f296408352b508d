#include "ElementValueLoader.h"

#include "WorkerJob.h"
#include "core/golden/OpRegistry.h"
#include "core/replay/TensorLoad.h"

namespace faultline::views {
namespace {

struct LoadAnswer {
    std::shared_ptr<const ElementValues> values;
    QString reason;
};

void setRows(ElementValues& v, const std::vector<uint64_t>& shape)
{
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    v.cols = shape.empty() ? 1 : shape.back();
    v.rows = v.cols ? n / v.cols : 0;
}

void fillDoubles(ElementValues& v)
{
    const size_t n = size_t(v.elements());
    v.suspect.resize(n);
    v.reference.resize(n);
    convertToDouble(v.dtype, v.suspectRaw.data(), v.suspect.data(), n);
    convertToDouble(v.dtype, v.referenceRaw.data(), v.reference.data(), n);
}

Result<std::vector<std::byte>> readWhole(const TensorFile& file, const std::string& name)
{
    auto index = file.find(name);
    if (!index) return fileError(file.path(), "no tensor '" + name + "'");
    const TensorInfo& t = file.tensors()[*index];
    std::vector<std::byte> out(size_t(t.byteCount()));
    Status st = file.read(*index, 0, t.elementCount(), out.data());
    if (!st) return st.error();
    return out;
}

}  // namespace

ElementValueLoader::ElementValueLoader(QObject* parent) : QObject(parent) {}

ElementValueLoader::~ElementValueLoader()
{
    if (m_cancel) m_cancel->store(true);
}

void ElementValueLoader::reset()
{
    if (m_cancel) m_cancel->store(true);
    ++m_currentJob;
}

Result<ElementValues> ElementValueLoader::load(const Incident& incident, int entryId,
                                               const std::atomic<bool>* cancel)
{
    const IncidentEntry* e = incident.entry(entryId);
    if (!e || !e->hasInfo) return Error{"no tensor to read"};
    ElementValues v;
    v.entryId = entryId;
    v.dtype = e->dtype;
    setRows(v, e->shape);
    if (v.elements() > kMaxElements)
        return Error{"element values are kept for tensors up to " + std::to_string(kMaxElements) +
                     " elements"};
    if (e->source == EntrySource::TraceOp) {
        if (!incident.trace || e->suspectTensor.empty()) return Error{"no recorded output"};
        const Trace& trace = *incident.trace;
        if (!e->referenceTensor.empty()) {  // judged by a peer: its bits are the reference
            auto recorded = loadTensor(*trace.file, e->suspectTensor);
            if (!recorded) return recorded.error();
            if (cancel && cancel->load()) return cancelledError("cancelled");
            auto peer = loadTensor(*trace.file, e->referenceTensor);
            if (!peer) return peer.error();
            if (peer->dtype != recorded->dtype || peer->shape != recorded->shape)
                return Error{"the recorded output and the peer's differ in dtype or shape"};
            v.dtype = recorded->dtype;
            setRows(v, recorded->shape);
            v.suspectRaw = std::move(recorded->data);
            v.referenceRaw = std::move(peer->data);
            v.suspectLabel = QStringLiteral("%1 (recorded)").arg(incident.suspectLabel);
            v.referenceLabel = QStringLiteral("%1 (peer)").arg(e->peerLabel);
            fillDoubles(v);
            return v;
        }
        const TraceOp* op = nullptr;
        for (const TraceOp& o : trace.ops)
            if (o.index == e->opIndex) op = &o;
        if (!op || !golden::findGoldenOp(op->op))
            return Error{"the golden model has no '" + e->opKind.toStdString() + "' op"};
        auto recorded = loadTensor(*trace.file, e->suspectTensor);
        if (!recorded) return recorded.error();
        if (cancel && cancel->load()) return cancelledError("cancelled");
        auto inputs = loadOpInputs(trace, *op);
        if (!inputs) return inputs.error();
        auto gold = golden::runGolden(op->op, *inputs, op->params);
        if (!gold) return gold.error();
        if (gold->dtype != recorded->dtype || gold->shape != recorded->shape)
            return Error{"the recorded output and the golden output differ in dtype or shape"};
        v.dtype = recorded->dtype;
        setRows(v, recorded->shape);
        v.suspectRaw = std::move(recorded->data);
        v.referenceRaw = std::move(gold->data);
        v.suspectLabel = QStringLiteral("%1 (recorded)").arg(incident.suspectLabel);
        v.referenceLabel = QStringLiteral("golden model");
    } else {
        const TensorFile* s = incident.hasPair() ? incident.suspectFile.get() : incident.singleFile.get();
        const TensorFile* r = incident.hasPair() ? incident.referenceFile.get() : nullptr;
        if (!s || !r) return Error{"a lone file has nothing to compare with"};
        auto sb = readWhole(*s, e->suspectTensor);
        if (!sb) return sb.error();
        if (cancel && cancel->load()) return cancelledError("cancelled");
        auto rb = readWhole(*r, e->referenceTensor);
        if (!rb) return rb.error();
        if (sb->size() != rb->size() || sb->size() != size_t(v.elements()) * dtypeSize(v.dtype))
            return Error{"the two tensors differ in size"};
        v.suspectRaw = std::move(sb).value();
        v.referenceRaw = std::move(rb).value();
        v.suspectLabel = QStringLiteral("suspect");
        v.referenceLabel = QStringLiteral("reference");
    }
    fillDoubles(v);
    return v;
}

quint64 ElementValueLoader::loadOnWorker(std::shared_ptr<const Incident> incident, int entryId)
{
    if (m_cancel) m_cancel->store(true);
    const quint64 job = ++m_currentJob;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    auto cancelFlag = m_cancel;
    auto work = [incident, entryId, cancelFlag](QPromise<LoadAnswer>& promise) {
        auto r = load(*incident, entryId, cancelFlag.get());
        if (r)
            promise.addResult(LoadAnswer{std::make_shared<const ElementValues>(std::move(r).value()), {}});
        else
            promise.addResult(LoadAnswer{nullptr, QString::fromStdString(r.message())});
    };
    startWorkerJob<LoadAnswer>(
        this, std::move(work), [](int, int, int, const QString&) {},
        [this, job](LoadAnswer answer) {
            if (job != m_currentJob) return;  // stale
            if (answer.values)
                emit loaded(job, answer.values);
            else
                emit unavailable(job, answer.reason);
        });
    return job;
}

}  // namespace faultline::views
