// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "mesh_gen_command_line.hpp"

namespace korch::mesh::airfoil {

std::unique_ptr<cli::Program> mesh_gen_command_line(MeshGenArgs& a) {
  auto program =
      std::make_unique<cli::Program>("korch-mesh-gen",
                                     "writes an O-grid airfoil mesh (NACA0012, circular far field) of NI x NJ\n"
                                     "cells as OUTDIR/mesh.dat and OUTDIR/constants.txt (the airfoil-162 format).",
                                     cli::Program::without_kokkos);
  CLI::App& app = program->app();
  cli::add_integer(app, "NI", a.ni, "cells around the profile", 8)->required()->default_str("");
  cli::add_integer(app, "NJ", a.nj, "cells outwards, from the profile to the far field", 2)
      ->required()
      ->default_str("");
  app.add_option("OUTDIR", a.out, "output folder (created when missing)")
      ->type_name("DIR")
      ->required()
      ->check(cli::non_empty());
  cli::add_real(app, "--far", a.far, "far-field radius in chords", 1.0)->type_name("R");
  program->add_note("Example: korch-mesh-gen 400 250 /tmp/airfoil-100k (100 000 cells).");
  return program;
}

}  // namespace korch::mesh::airfoil
