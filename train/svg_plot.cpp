#include "train/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace agf::train {

namespace {

constexpr double kPlotWidth = 300, kPlotHeight = 190, kMarginLeft = 62, kMarginBottom = 42, kMarginTop = 30,
                 kLegendWidth = 150, kLegendLine = 13;

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

// One axis: its data range widened to whole decades (log) or to a multiple of a 1-2-5 tick step (linear),
// the ticks, and the map from a value to [0, 1] along the axis.
struct AxisRange {
  AxisScale scale;
  double low = 0, high = 1;  // in axis units: log10 of the value on a log axis
  std::vector<double> ticks;

  double position(double value) const {
    const double v = scale == AxisScale::log ? std::log10(value) : value;
    return (std::clamp(v, low, high) - low) / (high - low);
  }
  std::string tick_label(double tick) const {
    return scale == AxisScale::log ? fmt::format("1e{}", tick) : fmt::format("{:g}", tick);
  }
};

bool plotted(double value, AxisScale scale) {
  return std::isfinite(value) && (scale == AxisScale::linear || value > 0);
}

AxisRange axis_range(AxisScale scale, double min, double max) {
  AxisRange axis;
  axis.scale = scale;
  if (scale == AxisScale::log) {
    if (!(max >= min)) min = 1, max = 10;
    axis.low = std::floor(std::log10(min)), axis.high = std::max(std::ceil(std::log10(max)), axis.low + 1);
    for (double d = axis.low; d <= axis.high; ++d) axis.ticks.push_back(d);
    return axis;
  }
  if (!(max >= min)) min = 0, max = 1;
  if (max == min) min -= 0.5, max += 0.5;
  const double rough = (max - min) / 5, decade = std::pow(10, std::floor(std::log10(rough)));
  const double step = decade * (rough <= decade ? 1 : rough <= 2 * decade ? 2 : rough <= 5 * decade ? 5 : 10);
  axis.low = std::floor(min / step) * step, axis.high = std::ceil(max / step) * step;
  for (double t = axis.low; t <= axis.high + step / 2; t += step) axis.ticks.push_back(std::abs(t) < step / 2 ? 0 : t);
  return axis;
}

}  // namespace

std::string palette_color(std::size_t index) {
  static const char* colors[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                 "#56B4E9", "#D55E00", "#F0E442", "#000000"};
  return colors[index % 8];
}

std::string render_panels(const std::string& title, const std::vector<Panel>& panels, int columns, const Axis& x,
                          const Axis& y) {
  double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min, y_min = x_min, y_max = -x_min;
  for (const auto& panel : panels) {
    for (const auto& series : panel.series) {
      for (std::size_t i = 0; i < series.x.size(); ++i) {
        if (!plotted(series.x[i], x.scale) || !plotted(series.y[i], y.scale)) continue;
        x_min = std::min(x_min, series.x[i]), x_max = std::max(x_max, series.x[i]);
        y_min = std::min(y_min, series.y[i]), y_max = std::max(y_max, series.y[i]);
      }
    }
  }
  const AxisRange x_axis = axis_range(x.scale, x_min, x_max), y_axis = axis_range(y.scale, y_min, y_max);
  const double panel_width = kMarginLeft + kPlotWidth + 16 + kLegendWidth,
               panel_height = kMarginTop + kPlotHeight + kMarginBottom;
  const int rows = (static_cast<int>(panels.size()) + columns - 1) / columns;
  const double width = std::min<int>(columns, static_cast<int>(panels.size())) * panel_width,
               height = rows * panel_height + 40;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">{3}</text>\n",
      width, height, width / 2, escape(title));
  for (std::size_t p = 0; p < panels.size(); ++p) {
    const double ox = static_cast<double>(p % columns) * panel_width,
                 oy = 40 + static_cast<double>(p / columns) * panel_height;
    const double plot_x = ox + kMarginLeft, plot_y = oy + kMarginTop;
    auto sx = [&](double v) { return plot_x + x_axis.position(v) * kPlotWidth; };
    auto sy = [&](double v) { return plot_y + kPlotHeight - y_axis.position(v) * kPlotHeight; };
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n",
                       ox + panel_width / 2, oy + 18, escape(panels[p].title));  // over the plot and its legend
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", plot_x,
                       plot_y, kPlotWidth, kPlotHeight);
    for (double tick : x_axis.ticks) {
      const double at = plot_x + (tick - x_axis.low) / (x_axis.high - x_axis.low) * kPlotWidth;
      svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{0}\" y=\"{3}\" "
                         "text-anchor=\"middle\">{4}</text>\n",
                         at, plot_y, plot_y + kPlotHeight, plot_y + kPlotHeight + 14, x_axis.tick_label(tick));
    }
    for (double tick : y_axis.ticks) {
      const double at = plot_y + kPlotHeight - (tick - y_axis.low) / (y_axis.high - y_axis.low) * kPlotHeight;
      svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4}\" "
                         "text-anchor=\"end\">{5}</text>\n",
                         plot_x, at, plot_x + kPlotWidth, plot_x - 4, at + 4, y_axis.tick_label(tick));
    }
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", plot_x + kPlotWidth / 2,
                       plot_y + kPlotHeight + 30, escape(x.label));
    svg += fmt::format(
        "<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" transform=\"rotate(-90 {0} {1})\">{2}</text>\n", ox + 14,
        plot_y + kPlotHeight / 2, escape(y.label));
    for (std::size_t s = 0; s < panels[p].series.size(); ++s) {
      const Series& series = panels[p].series[s];
      std::string points;
      for (std::size_t i = 0; i < series.x.size(); ++i) {
        if (plotted(series.x[i], x.scale) && plotted(series.y[i], y.scale)) {
          points += fmt::format("{:.1f},{:.1f} ", sx(series.x[i]), sy(series.y[i]));
        }
      }
      svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\"{} points=\"{}\"/>\n", series.color,
                         series.dashed ? " stroke-dasharray=\"5,4\"" : "", points);
      // the legend, beside the plot
      const double legend_x = plot_x + kPlotWidth + 12, legend_y = plot_y + 6 + kLegendLine * static_cast<double>(s);
      svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>"
                         "<text x=\"{5}\" y=\"{6}\">{7}</text>\n",
                         legend_x, legend_y, legend_x + 16, series.color,
                         series.dashed ? " stroke-dasharray=\"4,3\"" : "", legend_x + 20, legend_y + 4,
                         escape(series.label));
    }
  }
  return svg + "</svg>\n";
}

}  // namespace agf::train
