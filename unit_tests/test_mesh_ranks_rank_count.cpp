// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Mesh loops on ranks give the same bits whatever the number of ranks: the airfoil's rms on N ranks
// equals one rank's to 1e-12 relative at every iteration, up to where the rms is round-off level,
// and the final state agrees to the bit, for the sequential, direct (coloured) and message-driven
// executors (one process, and 2 and 3 MPI ranks where MPI is built in).
#include <doctest/doctest.h>

#include <korch/communicator.hpp>
#include <korch/mesh.hpp>
#include "airfoil.hpp"
#include "test_sanitized.hpp"

#include <array>
#include <cmath>
#include <memory>
#include <string>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_mesh_ranks_rank_count {

#ifndef KORCH_MESH_DATA_DIR
#error "KORCH_MESH_DATA_DIR must name apps/mesh/data (set in unit_tests/CMakeLists.txt)"
#endif

using namespace korch;
using namespace korch::mesh;
namespace af = korch::mesh::airfoil;

namespace {

enum class Kind { Sequential, Direct, Message };

std::string kind_name(Kind kind) {
  return kind == Kind::Sequential ? "sequential" : kind == Kind::Direct ? "direct" : "message";
}

// The executor of `kind` on one rank (no partition) or on the partition's ranks; `sync` is set to
// the RankSync of the latter.
std::unique_ptr<Executor> make_executor(Kind kind, const Partition* part, RankSync** sync) {
  switch (kind) {
    case Kind::Sequential:
      if (!part) return std::make_unique<SequentialExecutor>();
      {
        auto exec = std::make_unique<RankExecutor>(*part);
        *sync = &exec->sync();
        return exec;
      }
    case Kind::Direct:
      if (!part) return std::make_unique<DirectExecutor>();
      {
        auto exec = std::make_unique<DirectExecutor>(*part);
        *sync = exec->sync();
        return exec;
      }
    case Kind::Message: break;
  }
  if (!part) return std::make_unique<MessageExecutor>();
  auto exec = std::make_unique<MessageExecutor>(*part);
  *sync = exec->sync();
  return exec;
}

// The long runs' length: 1000 iterations bring the update down to round-off, where any reordering
// of increments shows; a sanitized build checks the same code over 100 (unit_tests/CMakeLists.txt).
constexpr int kLongRun = korch::test::kSanitized ? 100 : 1000;

af::Constants stored_constants() {
  return af::read_constants(std::string(KORCH_MESH_DATA_DIR) + "/airfoil-162/constants.txt");
}

// Runs `iterations` airfoil iterations with `kind` on one rank and on every rank; checks both rms of
// every iteration to 1e-12 relative and the final state to the bit. Returns the last rms.
double check_rank_count_independent(const af::MeshData& mesh, Kind kind, int iterations) {
  af::Problem one(mesh, stored_constants()), ranks(mesh, stored_constants());
  const Partition part(Communicator::world(), ranks.cells, {ranks.nodes, ranks.edges, ranks.bedges, ranks.cells},
                       {ranks.pedge, ranks.pecell, ranks.pbedge, ranks.pbecell, ranks.pcell});
  RankSync* sync = nullptr;
  const std::unique_ptr<Executor> single = make_executor(kind, nullptr, &sync);
  const std::unique_ptr<Executor> on_ranks = make_executor(kind, &part, &sync);
  REQUIRE(sync != nullptr);
  INFO(kind_name(kind), " on ", part.size(), " ranks, partition ", part.method(), ", cells ", mesh.ncell);
  double largest = 0, last = 0;
  for (int it = 1; it <= iterations; ++it) {
    const std::array<double, 2> expected = one.iterate(*single), got = ranks.iterate(*on_ranks);
    for (int k = 0; k < 2; ++k) {
      const double difference = std::fabs(got[k] - expected[k]) / std::fabs(expected[k]);
      largest = std::max(largest, difference);
      if (difference > 1e-12 || it <= 4 || it == iterations) {
        INFO("iteration ", it, " step ", k, ": rms ", got[k], " expected ", expected[k]);
        CHECK(difference <= 1e-12);
      }
    }
    last = expected[1];
  }
  MESSAGE(kind_name(kind), " on ", part.size(), " ranks, ", mesh.ncell, " cells: largest relative rms difference ",
          largest, " over ", iterations, " iterations, last rms ", last);
  for (Dat<double, 4>* d : {&ranks.q, &ranks.qold, &ranks.res}) sync->gather(d->core());
  sync->gather(ranks.adt.core());
  // Every increment to a cell comes in the same order as on one rank, so the states agree to the bit.
  CHECK(ranks.max_difference(one.state()) == 0.0);
  return last;
}

}  // namespace

TEST_CASE("rank count: the 162-cell airfoil over 1000 iterations gives one rank's bits on every executor") {
  const auto mesh = af::read_mesh(std::string(KORCH_MESH_DATA_DIR) + "/airfoil-162/mesh.dat");
  for (const Kind kind : {Kind::Sequential, Kind::Direct, Kind::Message}) {
    const double last = check_rank_count_independent(mesh, kind, kLongRun);
    // By iteration 1000 the update is round-off: any reordering of increments would show here.
    if (kLongRun == 1000) CHECK(last < 1e-13);
  }
}

TEST_CASE("rank count: a generated 37 x 9 O-grid (333 cells) gives one rank's bits on every executor") {
  const auto mesh = af::generate_ogrid(37, 9);
  for (const Kind kind : {Kind::Sequential, Kind::Direct, Kind::Message})
    check_rank_count_independent(mesh, kind, kLongRun);
}

}  // namespace test_mesh_ranks_rank_count
