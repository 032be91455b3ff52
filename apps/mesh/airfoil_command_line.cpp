// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "airfoil_command_line.hpp"

namespace korch::mesh::airfoil {

std::unique_ptr<cli::Program> airfoil_command_line(AirfoilArgs& a) {
  auto program =
      std::make_unique<cli::Program>("korch-airfoil",
                                     "OP2's airfoil benchmark on korch mesh loops: reads a mesh, runs it with\n"
                                     "the chosen executor and prints the rms of both steps of every iteration.");
  CLI::App& app = program->app();
  using cli::add_integer;
  app.add_option("--data", a.dir, "folder holding mesh.dat and constants.txt (default: airfoil-162)")
      ->type_name("DIR")
      ->default_str("")
      ->check(cli::non_empty());
  app.add_option("--mesh", a.mesh_file, "mesh file (default: DIR/mesh.dat)")
      ->type_name("FILE")
      ->check(cli::non_empty());
  app.add_option("--constants", a.constants_file, "constants file (default: DIR/constants.txt)")
      ->type_name("FILE")
      ->check(cli::non_empty());
  app.add_option("--executor", a.executor, "sequential, direct, direct-atomics, message or message-random")
      ->type_name("NAME")
      ->check(cli::one_of({"sequential", "direct", "direct-atomics", "message", "message-random"}));
  add_integer(app, "--iterations", a.iterations, "iterations to run", 1);
  add_integer(app, "--threads", a.threads, "threads of the message-driven executors", 1, 1024);
  add_integer(app, "--seed", a.seed, "message order seed of message-random", 0);
  add_integer(app, "--every", a.every, "print the rms of every N-th iteration and of the last", 1);
  app.add_option("--dump", a.dump, "print LOOP's message-driven device graph and exit")
      ->type_name("LOOP")
      ->check(cli::one_of({"save_soln", "adt_calc", "res_calc", "bres_calc", "update"}));
  program->add_note("airfoil-162: " KORCH_MESH_DATA_DIR
                    "/airfoil-162. The direct executor colours the mesh;\n"
                    "direct-atomics increments with atomics. Loops for --dump: save_soln, adt_calc, res_calc,\n"
                    "bres_calc, update. Started by mpirun on several ranks, it partitions the mesh and runs\n"
                    "the chosen executor (default there: sequential) on each rank's share.");
  return program;
}

}  // namespace korch::mesh::airfoil
