#pragma once
// The benchmark scorecard as a figure (`faultline benchmark --out DIR`: DIR/scorecard.png): the
// confusion matrix of signature kinds on the single-pattern cases, and the detection rate of
// every detector by pattern. Drawn from the public JSON (Scorecard.h: scorecardToJson) with
// QPainter on an image, on the offscreen platform when there is no display.
#include <nlohmann/json.hpp>
#include <string>

#include "core/Result.h"

namespace faultline::views {

// Writes a PNG to `path`. Errors: a JSON that is no scorecard, a file that cannot be written.
Status renderBenchmarkPlot(const nlohmann::json& scorecard, const std::string& path);

}  // namespace faultline::views
