#include "views/shell/RecentFiles.h"

#include <QFileInfo>
#include <QSettings>
#include <QVariant>

namespace faultline::views {
namespace {
const char* const kKey = "recentIncidents";
}

QList<QStringList> RecentFiles::load()
{
    QList<QStringList> out;
    for (const QVariant& v : QSettings().value(QLatin1String(kKey)).toList()) {
        const QStringList paths = v.toStringList();
        if (!paths.isEmpty()) out << paths;
    }
    return out;
}

void RecentFiles::add(const QStringList& paths)
{
    QList<QStringList> recent = load();
    recent.removeAll(paths);
    recent.prepend(paths);
    while (recent.size() > kMax) recent.removeLast();
    QVariantList stored;
    for (const QStringList& p : recent) stored << QVariant(p);
    QSettings().setValue(QLatin1String(kKey), stored);
}

void RecentFiles::clear()
{
    QSettings().remove(QLatin1String(kKey));
}

QString RecentFiles::label(const QStringList& paths)
{
    QStringList names;
    for (const QString& p : paths) names << QFileInfo(p).fileName();
    return names.join(QStringLiteral(" + "));
}

}  // namespace faultline::views
