// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The XDMF half of the plot files (plot_file.hpp): the text that ParaView and VisIt read to find
// the mesh and the variables in the HDF5 file. XDMF 2 with a co-rectilinear mesh (origin and
// spacing, no coordinate arrays), which both read as one structured block (docs/plot-files.md).
// Always a 3-D mesh: a 2-D run is the one-cell-thick slab it computes on, because ParaView's XDMF
// readers lay a 2DCoRectMesh in the y-z plane.
#include "plot_file.hpp"

#include <fmt/format.h>

#include <string>

namespace korch::hydro {

namespace {

// XML's five special characters in attribute values and text.
std::string xml_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// z y x: slowest direction first, as XDMF and the datasets count them.
template <class T, class F>
std::string slowest_first(const std::array<T, 3>& v, F&& text) {
  return text(v[2]) + " " + text(v[1]) + " " + text(v[0]);
}

}  // namespace

std::string xdmf_grid(const PlotFrame& f, const std::string& h5_name) {
  const auto real = [](double x) { return fmt::format("{:.17g}", x); };
  const auto count = [](int n) { return std::to_string(n); };
  std::array<int, 3> nodes{f.cells[0] + 1, f.cells[1] + 1, f.cells[2] + 1};
  const std::string cells = slowest_first(f.cells, count);
  std::string out;
  out += fmt::format("    <Grid Name=\"{}\" GridType=\"Uniform\">\n", xml_escaped(fmt::format("cycle {}", f.cycle)));
  out += fmt::format("      <Time Value=\"{}\"/>\n", real(f.time));
  out +=
      fmt::format("      <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"{}\"/>\n", slowest_first(nodes, count));
  out += "      <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n";
  out += fmt::format(
      "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">{}</DataItem>\n",
      slowest_first(f.origin, real));
  out += fmt::format(
      "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">{}</DataItem>\n",
      slowest_first(f.spacing, real));
  out += "      </Geometry>\n";
  for (const PlotVariable& v : f.variables) {
    out += fmt::format("      <Attribute Name=\"{}\" AttributeType=\"Scalar\" Center=\"Cell\">\n", xml_escaped(v.name));
    out += fmt::format(
        "        <DataItem Dimensions=\"{}\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">{}:/{}</DataItem>\n",
        cells, xml_escaped(h5_name), xml_escaped(v.name));
    out += "      </Attribute>\n";
  }
  out += "    </Grid>\n";
  return out;
}

std::string xdmf_document(const std::vector<std::string>& grids, bool time_series) {
  std::string out =
      "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"2.0\">\n  <Domain>\n";
  if (time_series) out += "  <Grid Name=\"series\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const auto& g : grids) out += g;
  if (time_series) out += "  </Grid>\n";
  out += "  </Domain>\n</Xdmf>\n";
  return out;
}

}  // namespace korch::hydro
