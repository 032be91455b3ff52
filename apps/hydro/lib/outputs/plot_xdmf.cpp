// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The XDMF half of the plot files (plot_file.hpp): the text that ParaView and VisIt read to find
// the mesh and the variables in the HDF5 file. XDMF 2 with a co-rectilinear mesh (origin and
// spacing, no coordinate arrays), which both read as one structured block (docs/plot-files.md).
// Always a 3-D mesh: a 2-D run is the one-cell-thick slab it computes on, because ParaView's XDMF
// readers lay a 2DCoRectMesh in the y-z plane.
#include "plot_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

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

std::string real(double x) { return fmt::format("{:.17g}", x); }
std::string count(int n) { return std::to_string(n); }

// A co-rectilinear mesh of `cells` cells from `origin` with `spacing` (x y z).
std::string mesh_elements(const std::array<int, 3>& cells, const std::array<double, 3>& origin,
                          const std::array<double, 3>& spacing, const std::string& indent) {
  const std::array<int, 3> nodes{cells[0] + 1, cells[1] + 1, cells[2] + 1};
  std::string out;
  out += fmt::format("{}<Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"{}\"/>\n", indent,
                     slowest_first(nodes, count));
  out += indent + "<Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n";
  for (const auto& v : {origin, spacing})
    out += fmt::format(
        "{}  <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">{}</DataItem>\n", indent,
        slowest_first(v, real));
  out += indent + "</Geometry>\n";
  return out;
}

// An adaptive frame: a spatial collection of one uniform grid per leaf, each reading its rows of the
// stacked datasets through a hyperslab (start, stride, count; slowest direction first).
std::string xdmf_leaves(const PlotFrame& f, const std::string& h5_name) {
  const auto rank = static_cast<std::size_t>(f.dim);
  std::vector<int> dataset, leaf;  // slowest first
  for (int d = f.dim - 1; d >= 0; --d) {
    dataset.push_back(f.cells[static_cast<std::size_t>(d)]);
    leaf.push_back(f.leaf_cells[static_cast<std::size_t>(d)]);
  }
  const std::string dataset_dims = fmt::format("{}", fmt::join(dataset, " "));
  const std::string leaf_dims = fmt::format("{}", fmt::join(leaf, " "));
  std::string out;
  out += fmt::format("    <Grid Name=\"{}\" GridType=\"Collection\" CollectionType=\"Spatial\">\n",
                     xml_escaped(fmt::format("cycle {}", f.cycle)));
  out += fmt::format("      <Time Value=\"{}\"/>\n", real(f.time));
  for (std::size_t n = 0; n < f.leaves.size(); ++n) {
    const PlotLeaf& l = f.leaves[n];
    std::array<double, 3> spacing = l.spacing, origin = l.origin;
    if (f.dim == 2) {  // the one-cell slab, as thick as the leaf's cells are wide
      spacing[2] = spacing[0];
      origin[2] = 0.0;
    }
    std::vector<int> start(rank, 0), stride(rank, 1);
    start[0] = static_cast<int>(n) * leaf[0];
    out += fmt::format("      <Grid Name=\"leaf {} (level {})\" GridType=\"Uniform\">\n", n, l.level);
    out += mesh_elements({f.leaf_cells[0], f.leaf_cells[1], f.dim == 3 ? f.leaf_cells[2] : 1}, origin, spacing,
                         "        ");
    for (const PlotVariable& v : f.variables) {
      out += fmt::format("        <Attribute Name=\"{}\" AttributeType=\"Scalar\" Center=\"Cell\">\n",
                         xml_escaped(v.name));
      out +=
          fmt::format("          <DataItem ItemType=\"HyperSlab\" Dimensions=\"{}\" Type=\"HyperSlab\">\n", leaf_dims);
      out += fmt::format("            <DataItem Dimensions=\"3 {}\" Format=\"XML\">{} {} {}</DataItem>\n", rank,
                         fmt::join(start, " "), fmt::join(stride, " "), fmt::join(leaf, " "));
      out += fmt::format(
          "            <DataItem Dimensions=\"{}\" NumberType=\"Float\" Precision=\"8\" "
          "Format=\"HDF\">{}:/{}</DataItem>\n",
          dataset_dims, xml_escaped(h5_name), xml_escaped(v.name));
      out += "          </DataItem>\n        </Attribute>\n";
    }
    out += "      </Grid>\n";
  }
  out += "    </Grid>\n";
  return out;
}

}  // namespace

std::string xdmf_grid(const PlotFrame& f, const std::string& h5_name) {
  if (!f.leaves.empty()) return xdmf_leaves(f, h5_name);
  const std::string cells = slowest_first(f.cells, count);
  std::string out;
  out += fmt::format("    <Grid Name=\"{}\" GridType=\"Uniform\">\n", xml_escaped(fmt::format("cycle {}", f.cycle)));
  out += fmt::format("      <Time Value=\"{}\"/>\n", real(f.time));
  out += mesh_elements(f.cells, f.origin, f.spacing, "      ");
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
