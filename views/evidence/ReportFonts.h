#pragma once
// The fonts a rich-text document uses, met ahead of its first layout. A QTextBrowser's first
// layout of a report loads a font engine and rasterises glyphs for every heading, bold, code and
// table font it meets, all in one GUI-thread turn; font engines are per thread, so a worker's
// layout does not spare it. The fonts are listed on the worker that parsed the document and met
// on the GUI thread one per event-loop turn, so the layout that follows finds them ready.
#include <QFont>
#include <QList>

class QTextDocument;

namespace faultline::views {

// The distinct fonts of `doc`'s text fragments and blocks, as their formats state them (heading
// sizes included; the document's default font fills the rest). Callable on the thread owning `doc`.
QList<QFont> documentFonts(const QTextDocument& doc);

// Loads `font`'s engine and the glyphs of printable ASCII on the calling (GUI) thread.
void meetFontOnUi(const QFont& font);

}  // namespace faultline::views
