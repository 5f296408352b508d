#pragma once
// The GUI build's part of `faultline evidence`: the figures (a heatmap of the first divergent
// op's max |error| per tile and its bit-flip histogram, PNG) and report.pdf, drawn with Qt Gui
// (QPainter, QTextDocument, QPdfWriter) on the offscreen platform when there is no display.
#include "core/evidence/EvidenceBundle.h"

namespace faultline::cli {

// Sets options.renderFigures and options.renderPdf.
void attachEvidenceRendering(EvidenceOptions& options);

}  // namespace faultline::cli
