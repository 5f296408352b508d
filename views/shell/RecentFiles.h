#pragma once
// Recently opened incidents (each a list of paths: a trace, a pair, or both), in QSettings.
#include <QList>
#include <QStringList>

namespace faultline::views {

class RecentFiles {
public:
    static constexpr int kMax = 10;
    static QList<QStringList> load();
    // Moves `paths` to the front (adding it), keeping at most kMax.
    static void add(const QStringList& paths);
    static void clear();
    // "incident-trace.h5 + step-003-rank-1.h5 + …"
    static QString label(const QStringList& paths);
};

}  // namespace faultline::views
