#include "views/shell/Exporter.h"

#include <qcustomplot.h>
#include <QAbstractItemModel>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <functional>

namespace faultline::views {
namespace {

QString csvField(QString s)
{
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) || s.contains(QLatin1Char('\n'))) {
        s.replace(QLatin1Char('"'), QStringLiteral("\"\""));
        return QLatin1Char('"') + s + QLatin1Char('"');
    }
    return s;
}

}  // namespace

QString Exporter::savePlot(QCustomPlot* plot, const QString& path)
{
    if (!plot) return QObject::tr("%1: no plot to export").arg(path);
    const QString suffix = QFileInfo(path).suffix().toLower();
    bool ok = false;
    if (suffix == QLatin1String("pdf"))
        ok = plot->savePdf(path);
    else if (suffix == QLatin1String("png") || suffix.isEmpty())
        ok = plot->savePng(path, 0, 0, 2.0);
    else
        return QObject::tr("%1: export as .png or .pdf").arg(path);
    return ok ? QString() : QObject::tr("%1: could not write the file").arg(path);
}

QString Exporter::toCsv(QAbstractItemModel* model)
{
    QString out;
    if (!model) return out;
    const int columns = model->columnCount();
    QStringList header;
    for (int c = 0; c < columns; ++c) header << csvField(model->headerData(c, Qt::Horizontal).toString());
    out += header.join(QLatin1Char(',')) + QLatin1Char('\n');
    std::function<void(const QModelIndex&, const QString&)> rows = [&](const QModelIndex& parent,
                                                                       const QString& path) {
        while (model->canFetchMore(parent)) model->fetchMore(parent);
        for (int r = 0; r < model->rowCount(parent); ++r) {
            const QModelIndex first = model->index(r, 0, parent);
            const QString name = model->data(first).toString();
            const QString full = path.isEmpty() ? name : path + QLatin1Char('/') + name;
            QStringList fields;
            fields << csvField(parent.isValid() || model->hasChildren(first) ? full : name);
            for (int c = 1; c < columns; ++c)
                fields << csvField(model->data(model->index(r, c, parent)).toString());
            out += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
            if (model->hasChildren(first)) rows(first, full);
        }
    };
    rows(QModelIndex(), QString());
    return out;
}

QString Exporter::writeCsv(QAbstractItemModel* model, const QString& path)
{
    if (!model) return QObject::tr("%1: no table to export").arg(path);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
        return QObject::tr("%1: %2").arg(path, file.errorString());
    file.write(toCsv(model).toUtf8());
    if (!file.commit()) return QObject::tr("%1: %2").arg(path, file.errorString());
    return {};
}

}  // namespace faultline::views
