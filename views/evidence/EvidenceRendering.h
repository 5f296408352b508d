#pragma once
// The GUI build's part of evidence bundles (`faultline evidence`, File > Export Evidence…): the figures (a
// heatmap of the first divergent op's max |error| per tile and its bit-flip histogram, PNG) and report.pdf,
// drawn with Qt Gui (QPainter, QTextDocument, QPdfWriter) on the offscreen platform when there is no display.
#include "core/evidence/EvidenceBundle.h"

namespace faultline::views {

// Sets options.renderFigures and options.renderPdf. Without a Qt application it creates a
// QGuiApplication (offscreen when there is no display); safe to call from a worker thread when
// the GUI's application exists (only QImage, QPainter on images, QTextDocument and QPdfWriter).
void attachEvidenceRendering(EvidenceOptions& options);

}  // namespace faultline::views
