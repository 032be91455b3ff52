// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Mesh loops on ranks: the airfoil's rms on N ranks equals one rank's, with METIS and block
// partitions, on the stored 162-cell mesh and a generated O-grid (one process, and 2 and 3 MPI
// ranks where MPI is built in).
#include <doctest/doctest.h>

#include <korch/communicator.hpp>
#include <korch/mesh.hpp>
#include "airfoil.hpp"

#include <array>
#include <cmath>
#include <string>
#include <vector>

#ifndef KORCH_MESH_DATA_DIR
#error "KORCH_MESH_DATA_DIR must name apps/mesh/data (set in unit_tests/CMakeLists.txt)"
#endif

using namespace korch;
using namespace korch::mesh;
namespace af = korch::mesh::airfoil;

namespace {

Partition airfoil_partition(af::Problem& p, PartitionMethod method) {
  return Partition(Communicator::world(), p.cells, {p.nodes, p.edges, p.bedges, p.cells},
                   {p.pedge, p.pecell, p.pbedge, p.pbecell, p.pcell}, method);
}

// Runs `iterations` airfoil iterations on one rank (sequential) and on every rank (RankExecutor)
// and compares the rms of every step, then the whole final state.
void check_against_one_rank(const af::MeshData& mesh, const af::Constants& constants, int iterations,
                            PartitionMethod method) {
  af::Problem one(mesh, constants), ranks(mesh, constants);
  SequentialExecutor sequential;
  const Partition part = airfoil_partition(ranks, method);
  RankExecutor exec(part);
  const int nranks = Communicator::world().size();
  INFO("ranks ", nranks, ", partition ", part.method(), ", cells ", mesh.ncell);
  CHECK(part.of(ranks.cells).owned.size() < static_cast<std::size_t>(mesh.ncell) + (nranks == 1 ? 1 : 0));
  for (int it = 1; it <= iterations; ++it) {
    const std::array<double, 2> expected = one.iterate(sequential), got = ranks.iterate(exec);
    for (int k = 0; k < 2; ++k) {
      INFO("iteration ", it, " step ", k, ": rms ", got[k], " expected ", expected[k]);
      CHECK(std::fabs(got[k] - expected[k]) <= 1e-12 * std::fabs(expected[k]));
    }
  }
  for (Dat<double, 4>* d : {&ranks.q, &ranks.qold, &ranks.res}) exec.gather(d->core());
  exec.gather(ranks.adt.core());
  // Every owned increment happens on its owner in one-rank order, so the states agree to the bit.
  CHECK(ranks.max_difference(one.state()) == 0.0);
  if (nranks > 1) CHECK(exec.counts().exchanges > 0);
}

af::MeshData stored_mesh() { return af::read_mesh(std::string(KORCH_MESH_DATA_DIR) + "/airfoil-162/mesh.dat"); }
af::Constants stored_constants() {
  return af::read_constants(std::string(KORCH_MESH_DATA_DIR) + "/airfoil-162/constants.txt");
}

}  // namespace

TEST_CASE("airfoil on ranks: the 162-cell mesh gives one rank's rms, METIS or block partition") {
  const auto mesh = stored_mesh();
  const auto constants = stored_constants();
  check_against_one_rank(mesh, constants, 12, PartitionMethod::Block);
  check_against_one_rank(mesh, constants, 12, PartitionMethod::Automatic);
}

TEST_CASE("airfoil on ranks: a generated 37 x 9 O-grid gives one rank's rms") {
  const auto mesh = af::generate_ogrid(37, 9);
  const auto constants = stored_constants();
  check_against_one_rank(mesh, constants, 8, PartitionMethod::Automatic);
  check_against_one_rank(mesh, constants, 4, PartitionMethod::Block);
}

TEST_CASE("partition: every element has one owner, halos are disjoint from owned elements") {
  const auto mesh = af::generate_ogrid(37, 9);
  af::Problem p(mesh, stored_constants());
  const Partition part = airfoil_partition(p, PartitionMethod::Automatic);
  const Communicator world = Communicator::world();
  CHECK(part.method() == (world.size() > 1 && Partition::have_metis() ? "metis" : "block"));
  for (const Set& s : part.sets()) {
    const SetPartition& sp = part.of(s);
    INFO("set ", s.name());
    CHECK(world.sum(static_cast<std::int64_t>(sp.owned.size())) == s.size());
    for (int e : sp.import) CHECK(sp.is_owned[static_cast<std::size_t>(e)] == 0);
    CHECK(sp.executed.size() >= sp.owned.size());
    if (world.size() == 1) CHECK(sp.import.empty());
  }
}
