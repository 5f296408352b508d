#pragma once
// Text conversions every view uses: core's std::string to QString, and numbers as the views
// print them.

#include <QString>
#include <cmath>
#include <string>

namespace faultline::views {

inline QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

// An element value or error: 9 significant digits (every float32 round-trips), NaN and infinities
// by name.
inline QString numberText(double v)
{
    if (std::isnan(v)) return QStringLiteral("NaN");
    if (std::isinf(v)) return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(v, 'g', 9);
}

}  // namespace faultline::views
