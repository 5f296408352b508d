#pragma once
// The tensor tree: every bisected op and compared tensor of an incident, grouped by its path
// (module paths and tensor names split on '/' and '.', a numeric part kept with the part before
// it: "blocks.0" / "mlp" / "fc1"). Group rows sum their children's counts, so sorting ranks
// layers too. Lazy: children are handed to the view in batches (canFetchMore / fetchMore).
#include <QAbstractItemModel>
#include <QIcon>
#include <memory>
#include <vector>

#include "views/incident/Incident.h"

namespace faultline::views {

class DivergenceTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column {
        Name,
        Op,
        Beyond,
        MaxUlp,
        SignatureColumn,
        Mismatches,
        DTypeColumn,
        Shape,
        Judge,
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole,  // numbers as numbers, for QSortFilterProxyModel
        EntryRole,                // entry id, -1 for group rows
        FirstDivergentRole,       // true on the bisect's first divergent op
    };
    static constexpr int kFetchBatch = 256;

    explicit DivergenceTreeModel(QObject* parent = nullptr);
    ~DivergenceTreeModel() override;

    // Shows `incident` (nullptr clears); resets the model.
    void setIncident(std::shared_ptr<const Incident> incident);
    const Incident* incident() const { return m_incident.get(); }

    // The index of an entry's row (fetching the groups above it), invalid when absent.
    QModelIndex indexForEntry(int entryId);
    int entryAt(const QModelIndex& index) const;

    // "blocks.0.mlp.fc1" -> [blocks.0, mlp, fc1]; "weights/layers.3.attn.q.weight" ->
    // [weights, layers.3, attn, q, weight].
    static QStringList splitPath(const QString& name);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    bool hasChildren(const QModelIndex& parent = {}) const override;
    bool canFetchMore(const QModelIndex& parent) const override;
    void fetchMore(const QModelIndex& parent) override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Node;
    Node* nodeOf(const QModelIndex& index) const;
    QModelIndex indexOf(Node* node) const;
    void build();
    QVariant displayData(const Node& node, int column) const;
    QVariant sortData(const Node& node, int column) const;

    std::shared_ptr<const Incident> m_incident;
    std::unique_ptr<Node> m_root;
    std::vector<Node*> m_nodeOfEntry;
    QIcon m_firstIcon, m_divergentIcon;
};

}  // namespace faultline::views
