// korch-mesh-gen: writes an O-grid airfoil mesh (NACA0012, circular far field) of NI x NJ cells in
// the airfoil-162 format, with constants.txt, for benchmarks: korch-mesh-gen NI NJ OUTDIR [--far R]
// e.g. korch-mesh-gen 400 250 /tmp/airfoil-100k  (100 000 cells). Runs no Kokkos.
#include <korch/cli/program.hpp>
#include "airfoil.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  namespace af = korch::mesh::airfoil;
  korch::cli::Program program("korch-mesh-gen",
                              "writes an O-grid airfoil mesh (NACA0012, circular far field) of NI x NJ\n"
                              "cells as OUTDIR/mesh.dat and OUTDIR/constants.txt (the airfoil-162 format).",
                              korch::cli::Program::without_kokkos);
  int ni = 0, nj = 0;
  double far = 10.0;
  std::string out;
  CLI::App& app = program.app();
  korch::cli::add_integer(app, "NI", ni, "cells around the profile", 8)->required()->default_str("");
  korch::cli::add_integer(app, "NJ", nj, "cells outwards, from the profile to the far field", 2)->required()->default_str("");
  app.add_option("OUTDIR", out, "output folder (created when missing)")->type_name("DIR")->required()->check(korch::cli::non_empty());
  korch::cli::add_real(app, "--far", far, "far-field radius in chords", 1.0)->type_name("R");
  program.add_note("Example: korch-mesh-gen 400 250 /tmp/airfoil-100k (100 000 cells).");
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    if (2LL * ni * (nj + 1) >= (1LL << 31))
      throw korch::cli::UsageError(fmt::format("NI x NJ: {} x {} has more nodes and edges than an int counts: use a "
                                               "smaller mesh", ni, nj));
    std::filesystem::create_directories(out);
    const af::MeshData m = af::generate_ogrid(ni, nj, far);
    af::write_mesh(m, out + "/mesh.dat");
    af::write_constants(af::reference_constants(), out + "/constants.txt");
    fmt::print("wrote {}/mesh.dat: {} nodes, {} cells, {} edges, {} boundary edges\n", out, m.nnode, m.ncell, m.nedge,
               m.nbedge);
    return 0;
  });
}
