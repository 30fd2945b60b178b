#pragma once
// A minimal SVG line-chart writer for `agf inspect` and the experiment's plots: a grid of panels sharing
// their axes (linear or logarithmic), one polyline per series, ticks, titles and a legend to the right of
// each panel. No dependencies; the output opens in any browser.
#include <string>
#include <vector>

namespace agf::train {

struct Series {
  std::string label;
  std::vector<double> x, y;  // points off a log axis (≤ 0) or not finite are left out
  std::string color;
  bool dashed = false;
};

struct Panel {
  std::string title;
  std::vector<Series> series;
};

enum class AxisScale { linear, log };

struct Axis {
  std::string label;
  AxisScale scale = AxisScale::linear;
};

// Panels laid out `columns` to a row; every panel shares the same x and y ranges (computed from the data).
std::string render_panels(const std::string& title, const std::vector<Panel>& panels, int columns, const Axis& x,
                          const Axis& y);

// A qualitative palette (colour-blind friendly) of 8 colours, cycled: a caller with more series than that
// tells the next 8 apart by dashing them.
std::string palette_color(std::size_t index);

}  // namespace agf::train
