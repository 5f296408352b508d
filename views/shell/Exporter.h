#pragma once
// Export of what is on screen: a plot as PNG or PDF (by the file's suffix), a table or tree
// model as CSV (every row, groups fetched; a tree's first column is the full path). Errors are
// returned as messages naming the file.
#include <QString>

class QAbstractItemModel;
class QCustomPlot;

namespace faultline::views {

class Exporter {
public:
    // "" on success, else the error.
    static QString savePlot(QCustomPlot* plot, const QString& path);
    static QString writeCsv(QAbstractItemModel* model, const QString& path);
    // The CSV text of a model (RFC 4180 quoting).
    static QString toCsv(QAbstractItemModel* model);
};

}  // namespace faultline::views
