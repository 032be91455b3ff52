// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-mesh-gen: writes an O-grid airfoil mesh (NACA0012, circular far field) of NI x NJ cells in
// the airfoil-162 format, with constants.txt, for benchmarks: korch-mesh-gen NI NJ OUTDIR [--far R]
// e.g. korch-mesh-gen 400 250 /tmp/airfoil-100k  (100 000 cells). Runs no Kokkos.
#include "airfoil.hpp"
#include "mesh_gen_command_line.hpp"

#include <korch/error.hpp>
#include <korch/output_files.hpp>

#include <fmt/format.h>

#include <string>

int main(int argc, char** argv) {
  namespace af = korch::mesh::airfoil;
  af::MeshGenArgs a;
  const auto program = af::mesh_gen_command_line(a);
  if (auto rc = program->parse(argc, argv)) return *rc;
  return program->run([&] {
    if (2LL * a.ni * (a.nj + 1) >= (1LL << 31))
      throw korch::cli::UsageError(
          fmt::format("NI x NJ: {} x {} has more nodes and edges than an int counts: use a "
                      "smaller mesh",
                      a.ni, a.nj));
    try {
      korch::prepare_output_directory(a.out);
    } catch (const korch::Error& e) {
      throw korch::cli::UsageError(std::string("OUTDIR: ") + e.what());
    }
    const af::MeshData m = af::generate_ogrid(a.ni, a.nj, a.far);
    af::write_mesh(m, a.out + "/mesh.dat");
    af::write_constants(af::reference_constants(), a.out + "/constants.txt");
    fmt::print("wrote {}/mesh.dat: {} nodes, {} cells, {} edges, {} boundary edges\n", a.out, m.nnode, m.ncell, m.nedge,
               m.nbedge);
    return 0;
  });
}
