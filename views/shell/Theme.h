#pragma once
// The application look: Fusion with the standard light palette, or a dark palette (Qt 6.4 has
// no colour-scheme hint, so dark is a setting).
namespace faultline::views {

class Theme {
public:
    static void apply(bool dark);
};

}  // namespace faultline::views
