#include "tools/agf/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace agf::cli {

namespace {
constexpr double kPanelWidth = 360, kPanelHeight = 260, kMarginLeft = 62, kMarginBottom = 42, kMarginTop = 30;

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
}  // namespace

std::string palette_color(std::size_t index) {
  static const char* colors[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                 "#56B4E9", "#D55E00", "#F0E442", "#000000"};
  return colors[index % 8];
}

std::string render_loglog_panels(const std::string& title, const std::vector<Panel>& panels, int columns,
                                 const std::string& x_label, const std::string& y_label) {
  double x_min = std::numeric_limits<double>::infinity(), x_max = 0, y_min = x_min, y_max = 0;
  for (const auto& panel : panels) {
    for (const auto& series : panel.series) {
      for (std::size_t i = 0; i < series.x.size(); ++i) {
        if (series.x[i] <= 0 || series.y[i] <= 0 || !std::isfinite(series.y[i])) continue;
        x_min = std::min(x_min, series.x[i]);
        x_max = std::max(x_max, series.x[i]);
        y_min = std::min(y_min, series.y[i]);
        y_max = std::max(y_max, series.y[i]);
      }
    }
  }
  if (!(x_max > x_min)) x_min = 1, x_max = 10;
  if (!(y_max > y_min)) y_min = y_max > 0 ? y_max / 10 : 0.1, y_max = y_max > 0 ? y_max * 10 : 1;
  const double lx0 = std::floor(std::log10(x_min)), lx1 = std::ceil(std::log10(x_max));
  const double ly0 = std::floor(std::log10(y_min)), ly1 = std::max(std::ceil(std::log10(y_max)), ly0 + 1);
  const int rows = (static_cast<int>(panels.size()) + columns - 1) / columns;
  const double width = columns * kPanelWidth, height = rows * kPanelHeight + 40;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">{3}</text>\n",
      width, height, width / 2, escape(title));
  for (std::size_t p = 0; p < panels.size(); ++p) {
    const double ox = static_cast<double>(p % columns) * kPanelWidth,
                 oy = 40 + static_cast<double>(p / columns) * kPanelHeight;
    const double plot_x = ox + kMarginLeft, plot_y = oy + kMarginTop;
    const double plot_w = kPanelWidth - kMarginLeft - 16, plot_h = kPanelHeight - kMarginTop - kMarginBottom;
    auto sx = [&](double x) { return plot_x + (std::log10(x) - lx0) / (lx1 - lx0) * plot_w; };
    auto sy = [&](double y) { return plot_y + plot_h - (std::log10(y) - ly0) / (ly1 - ly0) * plot_h; };
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n",
                       plot_x + plot_w / 2, oy + 18, escape(panels[p].title));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", plot_x,
                       plot_y, plot_w, plot_h);
    for (double d = lx0; d <= lx1; ++d) {
      const double x = sx(std::pow(10, d));
      svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{0}\" y=\"{3}\" "
                         "text-anchor=\"middle\">1e{4}</text>\n",
                         x, plot_y, plot_y + plot_h, plot_y + plot_h + 14, d);
    }
    for (double d = ly0; d <= ly1; ++d) {
      const double y = sy(std::pow(10, d));
      svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4}\" "
                         "text-anchor=\"end\">1e{5}</text>\n",
                         plot_x, y, plot_x + plot_w, plot_x - 4, y + 4, d);
    }
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", plot_x + plot_w / 2,
                       plot_y + plot_h + 30, escape(x_label));
    svg += fmt::format(
        "<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" transform=\"rotate(-90 {0} {1})\">{2}</text>\n", ox + 14,
        plot_y + plot_h / 2, escape(y_label));
    for (std::size_t s = 0; s < panels[p].series.size(); ++s) {
      const Series& series = panels[p].series[s];
      std::string points;
      for (std::size_t i = 0; i < series.x.size(); ++i) {
        if (series.x[i] > 0 && series.y[i] > 0 && std::isfinite(series.y[i])) {
          points += fmt::format("{:.1f},{:.1f} ", sx(series.x[i]),
                                sy(std::clamp(series.y[i], std::pow(10, ly0), std::pow(10, ly1))));
        }
      }
      svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\"{} points=\"{}\"/>\n", series.color,
                         series.dashed ? " stroke-dasharray=\"5,4\"" : "", points);
      // legend, top right
      const double ly = plot_y + 12 + 13 * static_cast<double>(s);
      svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>"
                         "<text x=\"{5}\" y=\"{6}\">{7}</text>\n",
                         plot_x + plot_w - 86, ly, plot_x + plot_w - 70, series.color,
                         series.dashed ? " stroke-dasharray=\"4,3\"" : "", plot_x + plot_w - 66, ly + 4,
                         escape(series.label));
    }
  }
  return svg + "</svg>\n";
}

}  // namespace agf::cli
