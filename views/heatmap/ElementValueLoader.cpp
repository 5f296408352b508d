#include "views/heatmap/ElementValueLoader.h"

#include <algorithm>
#include <cstring>

#include "core/compare/AnomalyRegions.h"
#include "core/golden/OpRegistry.h"
#include "core/replay/TensorLoad.h"
#include "views/replay/WorkerJob.h"

namespace faultline::views {

struct ElementValueLoader::OpOutputs {
    DType dtype = DType::Float32;
    uint64_t rows = 0, cols = 0;
    std::vector<std::byte> suspect, reference;
    QString suspectLabel, referenceLabel;
};

namespace {

struct LoadAnswer {
    std::shared_ptr<const ElementValues> values;
    QString reason;
};

std::pair<uint64_t, uint64_t> view2d(const std::vector<uint64_t>& shape)
{
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    const uint64_t cols = shape.empty() ? 1 : shape.back();
    return {cols ? n / cols : 0, cols};
}

void fillDoubles(ElementValues& v)
{
    const size_t n = size_t(v.held());
    v.suspect.resize(n);
    v.reference.resize(n);
    convertToDouble(v.dtype, v.suspectRaw.data(), v.suspect.data(), n);
    convertToDouble(v.dtype, v.referenceRaw.data(), v.reference.data(), n);
}

// Rows of `w` from a row-major rows x cols matrix of `size`-byte elements held in `all`.
void cutWindow(const std::vector<std::byte>& all, uint64_t cols, unsigned size, const ElementWindow& w,
               std::vector<std::byte>& out)
{
    const uint64_t wc = w.colEnd - w.colBegin;
    out.resize(size_t(w.elements() * size));
    for (uint64_t r = w.rowBegin; r < w.rowEnd; ++r)
        std::memcpy(out.data() + (r - w.rowBegin) * wc * size, all.data() + (r * cols + w.colBegin) * size,
                    size_t(wc * size));
}

// Window `w` of tensor `name` (a rows x cols view of `dtype`) read from `file`: whole rows at once
// when they are short enough, else one segment per row. Never reads more than a bounded
// multiple of the window.
Status readWindow(const TensorFile& file, const std::string& name, DType dtype, uint64_t rows, uint64_t cols,
                  const ElementWindow& w, std::vector<std::byte>& out)
{
    auto index = file.find(name);
    if (!index) return fileError(file.path(), "no tensor '" + name + "'");
    const TensorInfo& t = file.tensors()[*index];
    if (t.dtype != dtype || t.elementCount() != rows * cols)
        return fileError(file.path(), "tensor '" + name + "' is not a " + std::string(dtypeName(dtype)) +
                                          " tensor of " + std::to_string(rows * cols) + " elements");
    const unsigned size = dtypeSize(dtype);
    const uint64_t wr = w.rowEnd - w.rowBegin, wc = w.colEnd - w.colBegin;
    out.resize(size_t(wr * wc * size));
    if (wc == cols) return file.read(*index, w.rowBegin * cols, wr * cols, out.data());
    if (wr * cols <= 4 * ElementValueLoader::kMaxWindowElements) {
        std::vector<std::byte> band(size_t(wr * cols * size));
        if (Status st = file.read(*index, w.rowBegin * cols, wr * cols, band.data()); !st) return st;
        for (uint64_t r = 0; r < wr; ++r)
            std::memcpy(out.data() + r * wc * size, band.data() + (r * cols + w.colBegin) * size,
                        size_t(wc * size));
        return {};
    }
    for (uint64_t r = 0; r < wr; ++r)
        if (Status st =
                file.read(*index, (w.rowBegin + r) * cols + w.colBegin, wc, out.data() + r * wc * size);
            !st)
            return st;
    return {};
}

// Both outputs of an op, whole: the recorded output and the peer's or the golden model's.
Result<ElementValueLoader::OpOutputs> opOutputs(const Incident& incident, const IncidentEntry& e,
                                                const std::atomic<bool>* cancel)
{
    if (!incident.trace || e.suspectTensor.empty()) return Error{"no recorded output"};
    const Trace& trace = *incident.trace;
    ElementValueLoader::OpOutputs out;
    auto recorded = loadTensor(*trace.file, e.suspectTensor);
    if (!recorded) return recorded.error();
    if (cancel && cancel->load()) return cancelledError("cancelled");
    HostTensor other;
    if (!e.referenceTensor.empty()) {  // judged by a peer: its bits are the reference
        auto peer = loadTensor(*trace.file, e.referenceTensor);
        if (!peer) return peer.error();
        if (peer->dtype != recorded->dtype || peer->shape != recorded->shape)
            return Error{"the recorded output and the peer's differ in dtype or shape"};
        other = std::move(peer).value();
        out.referenceLabel = QStringLiteral("%1 (peer)").arg(e.peerLabel);
    } else {
        const TraceOp* op = nullptr;
        for (const TraceOp& o : trace.ops)
            if (o.index == e.opIndex) op = &o;
        if (!op || !golden::findGoldenOp(op->op))
            return Error{"the golden model has no '" + e.opKind.toStdString() + "' op"};
        auto inputs = loadOpInputs(trace, *op);
        if (!inputs) return inputs.error();
        auto gold = golden::runGolden(op->op, *inputs, op->params);
        if (!gold) return gold.error();
        if (gold->dtype != recorded->dtype || gold->shape != recorded->shape)
            return Error{"the recorded output and the golden output differ in dtype or shape"};
        other = std::move(gold).value();
        out.referenceLabel = QStringLiteral("golden model");
    }
    out.dtype = recorded->dtype;
    std::tie(out.rows, out.cols) = view2d(recorded->shape);
    out.suspect = std::move(recorded->data);
    out.reference = std::move(other.data);
    out.suspectLabel = QStringLiteral("%1 (recorded)").arg(incident.suspectLabel);
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

ElementWindow ElementValueLoader::clipWindow(const ElementWindow& wanted, uint64_t rows, uint64_t cols)
{
    auto clip = [](uint64_t v, uint64_t hi) { return std::min(v, hi); };
    ElementWindow w{clip(wanted.rowBegin, rows), clip(std::max(wanted.rowEnd, wanted.rowBegin + 1), rows),
                    clip(wanted.colBegin, cols), clip(std::max(wanted.colEnd, wanted.colBegin + 1), cols)};
    // Larger than the cap: keep its centre.
    while (w.elements() > kMaxWindowElements) {
        if (w.rowEnd - w.rowBegin >= w.colEnd - w.colBegin) {
            const uint64_t cut = (w.rowEnd - w.rowBegin) / 4;
            w.rowBegin += cut;
            w.rowEnd -= cut;
        } else {
            const uint64_t cut = (w.colEnd - w.colBegin) / 4;
            w.colBegin += cut;
            w.colEnd -= cut;
        }
    }
    return w;
}

ElementWindow ElementValueLoader::windowAround(const ElementWindow& wanted, uint64_t rows, uint64_t cols)
{
    const ElementWindow w = clipWindow(wanted, rows, cols);
    // Grow by up to the window's own size on every side while the cap allows.
    for (uint64_t k = 4; k >= 1; k /= 2) {
        const uint64_t mr = (w.rowEnd - w.rowBegin) * k / 4, mc = (w.colEnd - w.colBegin) * k / 4;
        const ElementWindow grown{w.rowBegin > mr ? w.rowBegin - mr : 0, std::min(w.rowEnd + mr, rows),
                                  w.colBegin > mc ? w.colBegin - mc : 0, std::min(w.colEnd + mc, cols)};
        if (grown.elements() <= kMaxWindowElements) return grown;
    }
    return w;
}

ElementWindow ElementValueLoader::defaultWindow(const IncidentEntry& entry, uint64_t rows, uint64_t cols)
{
    const ElementWindow whole{0, rows, 0, cols};
    if (whole.elements() <= kMaxWindowElements || !entry.divergence) return windowAround(whole, rows, cols);
    const AnomalyRegions regions = findAnomalyRegions(*entry.divergence, 1);
    if (regions.regions.empty()) return windowAround({0, 1, 0, 1}, rows, cols);
    const Region& b = regions.regions.front().box;
    return windowAround({b.rowBegin, b.rowEnd, b.colBegin, b.colEnd}, rows, cols);
}

Result<ElementValues> ElementValueLoader::load(const Incident& incident, int entryId,
                                               const std::atomic<bool>* cancel,
                                               std::optional<ElementWindow> window, Cache* cache)
{
    const IncidentEntry* e = incident.entry(entryId);
    if (!e || !e->hasInfo) return Error{"no tensor to read"};
    ElementValues v;
    v.entryId = entryId;
    v.dtype = e->dtype;
    std::tie(v.rows, v.cols) = view2d(e->shape);
    if (e->source == EntrySource::TraceOp) {
        std::shared_ptr<const OpOutputs> outputs;
        if (cache) {
            const std::lock_guard<std::mutex> lock(cache->mutex);
            if (cache->incident == &incident && cache->entryId == entryId) outputs = cache->outputs;
        }
        if (!outputs) {
            auto made = opOutputs(incident, *e, cancel);
            if (!made) return made.error();
            outputs = std::make_shared<const OpOutputs>(std::move(made).value());
            if (cache) {
                const std::lock_guard<std::mutex> lock(cache->mutex);
                cache->incident = &incident;
                cache->entryId = entryId;
                cache->outputs = outputs;
            }
        }
        v.dtype = outputs->dtype;
        v.rows = outputs->rows;
        v.cols = outputs->cols;
        v.window = window ? clipWindow(*window, v.rows, v.cols) : defaultWindow(*e, v.rows, v.cols);
        const unsigned size = dtypeSize(v.dtype);
        cutWindow(outputs->suspect, v.cols, size, v.window, v.suspectRaw);
        cutWindow(outputs->reference, v.cols, size, v.window, v.referenceRaw);
        v.suspectLabel = outputs->suspectLabel;
        v.referenceLabel = outputs->referenceLabel;
    } else {
        const TensorFile* s = incident.hasPair() ? incident.suspectFile.get() : incident.singleFile.get();
        const TensorFile* r = incident.hasPair() ? incident.referenceFile.get() : nullptr;
        if (!s || !r) return Error{"a lone file has nothing to compare with"};
        v.window = window ? clipWindow(*window, v.rows, v.cols) : defaultWindow(*e, v.rows, v.cols);
        if (Status st = readWindow(*s, e->suspectTensor, v.dtype, v.rows, v.cols, v.window, v.suspectRaw);
            !st)
            return st.error();
        if (cancel && cancel->load()) return cancelledError("cancelled");
        if (Status st = readWindow(*r, e->referenceTensor, v.dtype, v.rows, v.cols, v.window, v.referenceRaw);
            !st)
            return st.error();
        v.suspectLabel = QStringLiteral("suspect");
        v.referenceLabel = QStringLiteral("reference");
    }
    fillDoubles(v);
    return v;
}

quint64 ElementValueLoader::loadOnWorker(std::shared_ptr<const Incident> incident, int entryId,
                                         std::optional<ElementWindow> window)
{
    if (m_cancel) m_cancel->store(true);
    const quint64 job = ++m_currentJob;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    auto cancelFlag = m_cancel;
    if (m_cacheFor.lock() != incident) {  // another incident: nothing kept applies
        m_cache = std::make_shared<Cache>();
        m_cacheFor = incident;
    }
    auto cache = m_cache;
    auto work = [incident, entryId, window, cancelFlag, cache](QPromise<LoadAnswer>& promise) {
        auto r = load(*incident, entryId, cancelFlag.get(), window, cache.get());
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
