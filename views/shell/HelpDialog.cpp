#include "views/shell/HelpDialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QMenu>
#include <QMenuBar>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace faultline::views {
namespace {

QString plain(QString text)
{
    return text.remove(QLatin1Char('&'));
}

void collect(const QMenu* menu, const QString& path, QStringList& out)
{
    for (const QAction* a : menu->actions()) {
        if (a->isSeparator()) continue;
        const QString here = path + QStringLiteral(" › ") + plain(a->text());
        if (a->menu()) {
            collect(a->menu(), here, out);
            continue;
        }
        if (!a->shortcut().isEmpty())
            out << QStringLiteral("%1 — %2").arg(a->shortcut().toString(QKeySequence::NativeText), here);
    }
}

const char* const kGuide = R"(<h3>Faultline in five steps</h3>
<ol>
<li><b>Open an incident</b> (File › Open Incident): a trace, a suspect and a reference snapshot, or
some of them. Each file has its own field; drop a file onto it or browse. A second Open starts from
the files already open, so it adds to them; Clear starts a new incident.</li>
<li><b>Read the story</b>: the banner names the first op that left its bound and the tensor that
diverged; the tree lists every op and tensor; the heatmap shows where, the bit histogram which
bits, the error plot how far.</li>
<li><b>Replay</b> (Replay › Run Campaign): the divergent ops on the golden model, simulated targets
and this machine's GPUs, with repetitions. Each target gets a verdict, a rate with its 95% interval
and the reason; a run in flight shows how long it has been running.</li>
<li><b>Open results beside it</b> (File › Open Results, or drop files onto the window): a campaign
(<code>replay --out</code>), a comparison, a health report, an evidence bundle (checked as
<code>faultline verify</code> does) each open in a tab of the Results dock; a merged fleet in the
Fleet dock; a sweep or collective replay in the Links dock. The incident stays open.</li>
<li><b>Export evidence</b> (File › Export Evidence): the signed bundle for the RMA.</li>
</ol>
<p>Every action has a CLI equivalent: <code>faultline --help</code>.</p>)";

}  // namespace

QStringList HelpDialog::shortcutLines(const QMenuBar* menus)
{
    QStringList out;
    for (const QAction* a : menus->actions())
        if (a->menu()) collect(a->menu(), plain(a->text()), out);
    return out;
}

HelpDialog::HelpDialog(const QMenuBar* menus, QWidget* parent) : QDialog(parent)
{
    setObjectName(QStringLiteral("helpDialog"));
    setWindowTitle(tr("Faultline Guide"));
    auto* layout = new QVBoxLayout(this);
    m_text = new QTextBrowser;
    m_text->setObjectName(QStringLiteral("helpText"));
    QString html = QString::fromUtf8(kGuide) + tr("<h3>Keyboard shortcuts</h3><table>");
    for (const QString& line : shortcutLines(menus)) {
        const QString keys = line.section(QStringLiteral(" — "), 0, 0);
        const QString what = line.section(QStringLiteral(" — "), 1);
        html += QStringLiteral("<tr><td><b>%1</b>&nbsp;&nbsp;</td><td>%2</td></tr>")
                    .arg(keys.toHtmlEscaped(), what.toHtmlEscaped());
    }
    html += QStringLiteral("</table>");
    m_text->setHtml(html);
    layout->addWidget(m_text);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(640, 620);
}

}  // namespace faultline::views
