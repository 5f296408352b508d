#pragma once
// Painting without a window (evidence figures, benchmark plots): a Qt Gui application for fonts
// and QPainter, created on the offscreen platform when there is no display.
namespace faultline::views {

// Creates a QGuiApplication when none exists (offscreen without DISPLAY/WAYLAND_DISPLAY); it lives
// until the process ends. Does nothing when an application already exists.
void ensureGuiApplication();

}  // namespace faultline::views
