#include "views/incident/DivergenceTreeModel.h"

#include <QBrush>
#include <QFileInfo>
#include <QFont>
#include <QPainter>
#include <QPixmap>
#include <algorithm>
#include <functional>
#include <map>

#include "core/TensorInfo.h"
#include "views/plots/PlotStyle.h"

namespace faultline::views {

struct DivergenceTreeModel::Node {
    QString label;
    int entry = -1;
    Node* parent = nullptr;
    int row = 0;
    std::vector<std::unique_ptr<Node>> children;
    int fetched = 0;  // children handed to the view
    // Aggregates over the subtree (a leaf: its own entry).
    uint64_t mismatches = 0, beyond = 0, maxUlp = 0;
    bool hasStats = false;
    int divergent = 0;
    bool containsFirst = false;

    Node* child(const QString& name)
    {
        for (auto& c : children)
            if (c->entry < 0 && c->label == name) return c.get();
        return nullptr;
    }
    Node* add(std::unique_ptr<Node> n)
    {
        n->parent = this;
        n->row = int(children.size());
        children.push_back(std::move(n));
        return children.back().get();
    }
};

namespace {

QIcon badgeIcon(const QColor& fill, const QString& text)
{
    QPixmap pm(16, 16);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(fill);
    p.drawEllipse(text.isEmpty() ? QRectF(4, 4, 8, 8) : QRectF(1, 1, 14, 14));
    if (!text.isEmpty()) {
        QFont f = p.font();
        f.setBold(true);
        f.setPixelSize(11);
        p.setFont(f);
        p.setPen(Qt::white);
        p.drawText(QRectF(0, 0, 16, 16), Qt::AlignCenter, text);
    }
    return QIcon(pm);
}

qulonglong elementCount(const std::vector<uint64_t>& shape)
{
    qulonglong n = 1;
    for (uint64_t d : shape) n *= d;
    return n;
}

QString shapeText(const IncidentEntry& e)
{
    return e.hasInfo ? QString::fromStdString(shapeToString(e.shape)) : QString();
}

}  // namespace

DivergenceTreeModel::DivergenceTreeModel(QObject* parent)
    : QAbstractItemModel(parent), m_root(std::make_unique<Node>())
{
    m_firstIcon = badgeIcon(PlotStyle::firstDivergentColor(), QStringLiteral("1"));
    m_divergentIcon = badgeIcon(PlotStyle::divergentColor(), QString());
}

DivergenceTreeModel::~DivergenceTreeModel() = default;

QStringList DivergenceTreeModel::splitPath(const QString& name)
{
    QStringList out;
    for (const QString& slashPart : name.split(QLatin1Char('/'), Qt::SkipEmptyParts)) {
        for (const QString& dotPart : slashPart.split(QLatin1Char('.'), Qt::SkipEmptyParts)) {
            bool numeric = false;
            dotPart.toULongLong(&numeric);
            if (numeric && !out.isEmpty())
                out.last() += QLatin1Char('.') + dotPart;  // "layers.3" is one layer
            else
                out << dotPart;
        }
    }
    if (out.isEmpty()) out << name;
    return out;
}

void DivergenceTreeModel::setIncident(std::shared_ptr<const Incident> incident)
{
    beginResetModel();
    m_incident = std::move(incident);
    build();
    endResetModel();
}

void DivergenceTreeModel::build()
{
    m_root = std::make_unique<Node>();
    m_nodeOfEntry.clear();
    if (!m_incident) return;
    const Incident& inc = *m_incident;
    m_nodeOfEntry.assign(inc.entries.size(), nullptr);

    auto section = [&](const QString& label) {
        auto n = std::make_unique<Node>();
        n->label = label;
        return m_root->add(std::move(n));
    };
    std::map<int, Node*> sections;  // 0 ops, 1 tensors
    for (const IncidentEntry& e : inc.entries) {
        const int key = e.source == EntrySource::TraceOp ? 0 : 1;
        Node*& sec = sections[key];
        if (!sec) {
            if (key == 0)
                sec = section(tr("Trace ops · %1 vs golden model").arg(inc.suspectLabel));
            else if (inc.hasPair())
                sec = section(
                    tr("Checkpoints · %1 vs %2")
                        .arg(QFileInfo(QString::fromStdString(inc.suspectFile->path())).fileName(),
                             QFileInfo(QString::fromStdString(inc.referenceFile->path())).fileName()));
            else
                sec = section(
                    tr("Tensors · %1")
                        .arg(QFileInfo(QString::fromStdString(inc.singleFile ? inc.singleFile->path() : ""))
                                 .fileName()));
        }
        const QStringList parts = splitPath(e.name);
        Node* at = sec;
        for (int i = 0; i + 1 < parts.size(); ++i) {
            Node* next = at->child(parts[i]);
            if (!next) {
                auto n = std::make_unique<Node>();
                n->label = parts[i];
                next = at->add(std::move(n));
            }
            at = next;
        }
        // A leaf whose path is also a group ("fc1" next to "fc1.grad_weight") becomes that
        // group's own row, unless it already carries an entry.
        Node* leaf = at->child(parts.last());
        if (!leaf || leaf->entry >= 0) {
            auto n = std::make_unique<Node>();
            n->label = parts.last();
            leaf = at->add(std::move(n));
        }
        leaf->entry = e.id;
        m_nodeOfEntry[size_t(e.id)] = leaf;
    }
    // Aggregate bottom-up; a group that also is an entry counts its own entry too.
    std::function<void(Node&)> aggregate = [&](Node& n) {
        if (n.entry >= 0) {
            const IncidentEntry& e = inc.entries[size_t(n.entry)];
            if (const Divergence* d = e.divergence) {
                n.mismatches = d->mismatches;
                n.beyond = d->beyondTolerance;
                n.maxUlp = d->maxUlp;
                n.hasStats = true;
            }
            n.divergent = e.isDivergent() ? 1 : 0;
            n.containsFirst = inc.firstDivergentEntry && *inc.firstDivergentEntry == e.id;
        }
        for (auto& c : n.children) {
            aggregate(*c);
            n.mismatches += c->mismatches;
            n.beyond += c->beyond;
            n.maxUlp = std::max(n.maxUlp, c->maxUlp);
            n.hasStats = n.hasStats || c->hasStats;
            n.divergent += c->divergent;
            n.containsFirst = n.containsFirst || c->containsFirst;
        }
    };
    aggregate(*m_root);
    m_root->fetched = int(m_root->children.size());  // the sections
}

DivergenceTreeModel::Node* DivergenceTreeModel::nodeOf(const QModelIndex& index) const
{
    return index.isValid() ? static_cast<Node*>(index.internalPointer()) : m_root.get();
}

QModelIndex DivergenceTreeModel::indexOf(Node* node) const
{
    if (!node || node == m_root.get()) return {};
    return createIndex(node->row, 0, node);
}

QModelIndex DivergenceTreeModel::indexForEntry(int entryId)
{
    if (entryId < 0 || size_t(entryId) >= m_nodeOfEntry.size() || !m_nodeOfEntry[size_t(entryId)]) return {};
    Node* node = m_nodeOfEntry[size_t(entryId)];
    std::vector<Node*> chain;
    for (Node* n = node; n; n = n->parent) chain.push_back(n);
    // Fetch from the top so every row on the way exists in the view's eyes.
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        Node* n = *it;
        if (!n->parent) continue;
        while (n->row >= n->parent->fetched) fetchMore(indexOf(n->parent));
    }
    return indexOf(node);
}

int DivergenceTreeModel::entryAt(const QModelIndex& index) const
{
    const Node* n = index.isValid() ? nodeOf(index) : nullptr;
    return n ? n->entry : -1;
}

QModelIndex DivergenceTreeModel::index(int row, int column, const QModelIndex& parent) const
{
    Node* p = nodeOf(parent);
    if (row < 0 || row >= p->fetched || column < 0 || column >= ColumnCount) return {};
    return createIndex(row, column, p->children[size_t(row)].get());
}

QModelIndex DivergenceTreeModel::parent(const QModelIndex& child) const
{
    if (!child.isValid()) return {};
    Node* n = nodeOf(child);
    return indexOf(n->parent);
}

int DivergenceTreeModel::rowCount(const QModelIndex& parent) const
{
    if (parent.column() > 0) return 0;
    return nodeOf(parent)->fetched;
}

int DivergenceTreeModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

bool DivergenceTreeModel::hasChildren(const QModelIndex& parent) const
{
    if (parent.column() > 0) return false;
    return !nodeOf(parent)->children.empty();
}

bool DivergenceTreeModel::canFetchMore(const QModelIndex& parent) const
{
    if (parent.column() > 0) return false;
    const Node* n = nodeOf(parent);
    return n->fetched < int(n->children.size());
}

void DivergenceTreeModel::fetchMore(const QModelIndex& parent)
{
    if (!canFetchMore(parent)) return;
    Node* n = nodeOf(parent);
    const int first = n->fetched;
    const int last = std::min<int>(int(n->children.size()), first + kFetchBatch) - 1;
    beginInsertRows(parent, first, last);
    n->fetched = last + 1;
    endInsertRows();
}

QVariant DivergenceTreeModel::displayData(const Node& n, int column) const
{
    const IncidentEntry* e = n.entry >= 0 ? m_incident->entry(n.entry) : nullptr;
    switch (column) {
        case Name:
            return n.label;
        case Op:
            return e && e->source == EntrySource::TraceOp
                       ? QStringLiteral("#%1 %2").arg(e->opIndex).arg(e->opKind)
                       : QVariant();
        case DTypeColumn:
            if (!e || !e->hasInfo) return {};
            return QString::fromUtf8(dtypeName(e->dtype).data(), qsizetype(dtypeName(e->dtype).size()));
        case Shape:
            return e ? shapeText(*e) : QVariant();
        case Judge:
            return e && !e->judge.isEmpty() ? QVariant(e->judge) : QVariant();
        case Mismatches:
            return n.hasStats ? QVariant(QString::number(n.mismatches)) : QVariant();
        case Beyond:
            return n.hasStats ? QVariant(QString::number(n.beyond)) : QVariant();
        case MaxUlp:
            return n.hasStats ? QVariant(QString::number(n.maxUlp)) : QVariant();
        case SignatureColumn:
            if (!e) return n.divergent ? tr("%n divergent", nullptr, n.divergent) : QVariant();
            if (e->divergence && e->divergence->mismatches > 0)
                return QString::fromUtf8(signatureKindName(e->divergence->signature.kind).data());
            return e->verdict;
        default:
            return {};
    }
}

QVariant DivergenceTreeModel::sortData(const Node& n, int column) const
{
    const IncidentEntry* e = n.entry >= 0 ? m_incident->entry(n.entry) : nullptr;
    switch (column) {
        case Op:
            return e ? QVariant::fromValue<qulonglong>(e->opIndex) : QVariant::fromValue<qulonglong>(~0ull);
        case Shape:
            return e && e->hasInfo ? QVariant::fromValue<qulonglong>(elementCount(e->shape))
                                   : QVariant::fromValue<qulonglong>(0);
        case Mismatches:
            return QVariant::fromValue<qulonglong>(n.mismatches);
        case Beyond:
            return QVariant::fromValue<qulonglong>(n.beyond);
        case MaxUlp:
            return QVariant::fromValue<qulonglong>(n.maxUlp);
        default:
            return displayData(n, column);
    }
}

QVariant DivergenceTreeModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || !m_incident) return {};
    const Node& n = *nodeOf(index);
    const IncidentEntry* e = n.entry >= 0 ? m_incident->entry(n.entry) : nullptr;
    const bool first = e && m_incident->firstDivergentEntry && *m_incident->firstDivergentEntry == e->id;
    switch (role) {
        case Qt::DisplayRole:
            return displayData(n, index.column());
        case SortRole:
            return sortData(n, index.column());
        case EntryRole:
            return n.entry;
        case FirstDivergentRole:
            return first;
        case Qt::DecorationRole:
            if (index.column() != Name) return {};
            if (first) return m_firstIcon;
            if (e && e->isDivergent()) return m_divergentIcon;
            return {};
        case Qt::ForegroundRole:
            if ((e && e->isDivergent()) || (!e && n.divergent > 0))
                return QBrush(PlotStyle::divergentColor());
            if (e && e->isUnjudged()) return QBrush(PlotStyle::warningColor());
            return {};
        case Qt::FontRole:
            if (first) {
                QFont f;
                f.setBold(true);
                return f;
            }
            return {};
        case Qt::TextAlignmentRole:
            if (index.column() == Mismatches || index.column() == Beyond || index.column() == MaxUlp)
                return QVariant(Qt::AlignRight | Qt::AlignVCenter);
            return {};
        case Qt::ToolTipRole: {
            if (!e) return n.divergent ? tr("%n divergent below", nullptr, n.divergent) : QVariant();
            QString tip = QStringLiteral("<b>%1</b><br>%2").arg(e->name.toHtmlEscaped(), e->verdict);
            if (first) tip += tr("<br><b>First divergent op: the corruption enters here.</b>");
            if (!e->judge.isEmpty()) tip += tr("<br>Judged by: %1").arg(e->judge.toHtmlEscaped());
            if (!e->detail.isEmpty()) tip += QStringLiteral("<br>") + e->detail.toHtmlEscaped();
            return tip;
        }
        default:
            return {};
    }
}

QVariant DivergenceTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal) return {};
    static const char* names[] = {"Name",       "Op",    "Beyond tol.", "Max ULP", "Signature",
                                  "Mismatches", "DType", "Shape",       "Judge"};
    if (role == Qt::DisplayRole && section >= 0 && section < ColumnCount) return tr(names[section]);
    if (role == Qt::ToolTipRole && section == Beyond)
        return tr(
            "Elements beyond tolerance (ops: differing from the peer's bits, or beyond the golden "
            "model's error bound)");
    if (role == Qt::ToolTipRole && section == Judge)
        return tr(
            "What judged the op: a peer's bits (a rerun on a healthy device), the golden model "
            "exactly, or within its error bound (strict or loose)");
    return {};
}

}  // namespace faultline::views
