#include "views/shell/ReadOnlyTable.h"

#include <QHeaderView>
#include <QTableWidget>

QTableWidget* makeReadOnlyTable(const QString& objectName, const QStringList& headers)
{
    auto* table = new QTableWidget(0, int(headers.size()));
    table->setObjectName(objectName);
    table->setHorizontalHeaderLabels(headers);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setWordWrap(false);
    return table;
}
