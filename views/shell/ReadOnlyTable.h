#pragma once
// A table of read-only rows for the panels (devices, health): named for tests, header labels, no
// row numbers, whole rows selected, the last column stretched, no word wrap.
#include <QString>
#include <QStringList>

class QTableWidget;

QTableWidget* makeReadOnlyTable(const QString& objectName, const QStringList& headers);
