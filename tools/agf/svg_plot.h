#pragma once
// A minimal SVG line-chart writer for `agf inspect`: a grid of panels with log–log axes, one polyline per
// series, decade ticks, titles and a legend. No dependencies; the output opens in any browser.
#include <string>
#include <vector>

namespace agf::cli {

struct Series {
  std::string label;
  std::vector<double> x, y;  // all > 0 (log axes)
  std::string color;
  bool dashed = false;
};

struct Panel {
  std::string title;
  std::vector<Series> series;
};

// Panels laid out `columns` to a row; every panel shares the same x and y ranges (computed from the data).
std::string render_loglog_panels(const std::string& title, const std::vector<Panel>& panels, int columns,
                                 const std::string& x_label, const std::string& y_label);

// A qualitative palette (colour-blind friendly), cycled.
std::string palette_color(std::size_t index);

}  // namespace agf::cli
