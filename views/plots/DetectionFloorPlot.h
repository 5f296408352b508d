#pragma once
// The detection floor of a trace as a figure (`faultline benchmark --trace ... --out DIR`:
// DIR/floor.png): one row per op kind, dtype and judge, one column per bit position (bit 0 at the
// right, so a column is one bit position in every dtype), each cell the share of planted flips (both
// directions) the judge detected, white (none) to dark blue (all), grey where no flip could be planted. Drawn
// from the public JSON (DetectionFloor.h: detectionFloorJson) with QPainter on an image, offscreen without a
// display.
#include <nlohmann/json.hpp>
#include <string>

#include "core/Result.h"

namespace faultline::views {

// Writes a PNG to `path`. Errors: a JSON that is no detection floor, a file that cannot be written.
Status renderDetectionFloorPlot(const nlohmann::json& floor, const std::string& path);

}  // namespace faultline::views
