#include "views/results/ResultTabs.h"

#include <QFileInfo>

#include "views/results/ResultView.h"

namespace faultline::views {

ResultTabs::ResultTabs(QWidget* parent) : QTabWidget(parent)
{
    setObjectName(QStringLiteral("resultTabs"));
    setTabsClosable(true);
    setMovable(true);
    setDocumentMode(true);
    connect(this, &QTabWidget::tabCloseRequested, this, [this](int index) {
        QWidget* page = widget(index);
        removeTab(index);
        delete page;
    });
}

ResultView* ResultTabs::showResult(const QString& path, ResultKind kind, ResultSummary summary)
{
    auto* view = new ResultView(path, kind, std::move(summary));
    const QString label = view->title().isEmpty() ? QFileInfo(path).fileName() : view->title();
    if (ResultView* old = viewOf(path)) {
        const int index = indexOf(old);
        removeTab(index);
        delete old;
        insertTab(index, view, label);
    } else {
        addTab(view, label);
    }
    setTabToolTip(indexOf(view), path);
    setCurrentWidget(view);
    return view;
}

ResultView* ResultTabs::viewOf(const QString& path) const
{
    for (ResultView* v : views())
        if (v->path() == path) return v;
    return nullptr;
}

QList<ResultView*> ResultTabs::views() const
{
    QList<ResultView*> all;
    for (int i = 0; i < count(); ++i)
        if (auto* v = qobject_cast<ResultView*>(widget(i))) all << v;
    return all;
}

}  // namespace faultline::views
