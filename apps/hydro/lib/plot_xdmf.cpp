// The XDMF half of the plot files (plot_file.hpp): the text that ParaView and VisIt read to find
// the mesh and the variables in the HDF5 file. XDMF 2 with a co-rectilinear mesh (origin and
// spacing, no coordinate arrays), which both read as one structured block (docs/plot-files.md).
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

// Slowest direction first, as XDMF and the datasets count them.
template <class T, class F>
std::string slowest_first(const PlotFrame& f, const std::array<T, 3>& v, F&& text) {
  std::string out;
  for (int d = f.dim - 1; d >= 0; --d) out += (out.empty() ? "" : " ") + text(v[static_cast<std::size_t>(d)]);
  return out;
}

}  // namespace

std::string xdmf_grid(const PlotFrame& f, const std::string& h5_name) {
  const auto real = [](double x) { return fmt::format("{:.17g}", x); };
  const auto count = [](int n) { return std::to_string(n); };
  std::array<int, 3> nodes{f.cells[0] + 1, f.cells[1] + 1, f.cells[2] + 1};
  const std::string cells = slowest_first(f, f.cells, count);
  std::string out;
  out += fmt::format("    <Grid Name=\"{}\" GridType=\"Uniform\">\n", xml_escaped(fmt::format("cycle {}", f.cycle)));
  out += fmt::format("      <Time Value=\"{}\"/>\n", real(f.time));
  out += fmt::format("      <Topology TopologyType=\"{}DCoRectMesh\" Dimensions=\"{}\"/>\n", f.dim,
                     slowest_first(f, nodes, count));
  out += fmt::format("      <Geometry GeometryType=\"{}\">\n", f.dim == 3 ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY");
  out += fmt::format("        <DataItem Dimensions=\"{}\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">{}</DataItem>\n",
                     f.dim, slowest_first(f, f.origin, real));
  out += fmt::format("        <DataItem Dimensions=\"{}\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">{}</DataItem>\n",
                     f.dim, slowest_first(f, f.spacing, real));
  out += "      </Geometry>\n";
  for (const PlotVariable& v : f.variables) {
    out += fmt::format("      <Attribute Name=\"{}\" AttributeType=\"Scalar\" Center=\"Cell\">\n", xml_escaped(v.name));
    out += fmt::format("        <DataItem Dimensions=\"{}\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">{}:/{}</DataItem>\n",
                       cells, xml_escaped(h5_name), xml_escaped(v.name));
    out += "      </Attribute>\n";
  }
  out += "    </Grid>\n";
  return out;
}

std::string xdmf_document(const std::vector<std::string>& grids, bool time_series) {
  std::string out = "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"2.0\">\n  <Domain>\n";
  if (time_series) out += "  <Grid Name=\"series\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const auto& g : grids) out += g;
  if (time_series) out += "  </Grid>\n";
  out += "  </Domain>\n</Xdmf>\n";
  return out;
}

}  // namespace korch::hydro
