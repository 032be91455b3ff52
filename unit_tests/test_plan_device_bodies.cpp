// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Device bodies in plans (docs/planner.md, "Device bodies"): on a resident grid the device teams'
// blocks run the actions' device bodies on the grid's device copy, with the bits of program order
// on the host; stages whose actions lack a device body keep their host bodies; a grid without a
// device copy is an error naming the fix.
#include "test_plan_support.hpp"

#include <korch/grid_residency.hpp>
#include <korch/plan/scheduler.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <random>

using namespace korch;
using namespace korch::test;

namespace {

constexpr int max_reads = 8, max_writes = 4;
using Cells = plan::DeviceBlockCells::Cells;

// body_of's arithmetic (test_plan_support.hpp) as a kernel on the block's device cells: the same
// operations in the same order, so the same bits.
void device_kernel(const plan::DeviceBlockCells& block, const Box& box, const std::vector<std::pair<int, int>>& reads,
                   const std::vector<int>& writes, int salt, const DeviceTaskSpace& space) {
  Kokkos::Array<Cells, max_reads> in;
  Kokkos::Array<int, max_reads> var, stencil;
  const int n_reads = static_cast<int>(reads.size());
  for (int r = 0; r < n_reads; ++r) {
    in[r] = block.var(reads[static_cast<std::size_t>(r)].first);
    var[r] = reads[static_cast<std::size_t>(r)].first;
    stencil[r] = reads[static_cast<std::size_t>(r)].second;
  }
  Kokkos::Array<Cells, max_writes> out;
  const int n_writes = static_cast<int>(writes.size());
  for (int w = 0; w < n_writes; ++w) out[w] = block.var(writes[static_cast<std::size_t>(w)]);
  Kokkos::parallel_for(
      "plan device body",
      Kokkos::MDRangePolicy<DeviceTaskSpace, Kokkos::Rank<3>>(space, {box.lo[0], box.lo[1], box.lo[2]},
                                                              {box.hi[0], box.hi[1], box.hi[2]}),
      KOKKOS_LAMBDA(int i, int j, int k) {
        double acc = 0.001 * salt;
        for (int r = 0; r < n_reads; ++r) {
          const Cells& d = in[r];
          acc += 0.7 * d(i, j, k) + 0.013 * var[r];
          for (int s = 1; s <= stencil[r]; ++s)
            acc += 0.05 * (d(i - s, j, k) + d(i + s, j, k) + 0.5 * d(i, j - s, k) + 0.25 * d(i, j + s, k));
        }
        // Every read of the cell before any write: an action may read and write a variable.
        for (int w = 0; w < n_writes; ++w)
          out[w](i, j, k) = acc / (1.0 + (acc < 0 ? -acc : acc)) + 0.01 * static_cast<double>(w + 1);
      });
}

// `calls` counts the blocks the device bodies saw.
plan::DeviceActionBodies device_bodies_of(const plan::Operation& operation, std::atomic<int>& calls) {
  plan::DeviceActionBodies out;
  int salt = 1;
  for (const ActionDeclaration* a : operation.actions()) {
    std::vector<std::pair<int, int>> reads;
    for (const auto& r : a->reads) reads.emplace_back(operation.variable_index(r.variable), r.stencil);
    std::vector<int> writes;
    for (const auto& w : a->writes) writes.push_back(operation.variable_index(w));
    REQUIRE(reads.size() <= static_cast<std::size_t>(max_reads));
    REQUIRE(writes.size() <= static_cast<std::size_t>(max_writes));
    out[a->action] = [reads, writes, salt, &calls](const ActionContext& ctx, const plan::DeviceBlockCells& block,
                                                   const Box& box) {
      ++calls;
      device_kernel(block, box, reads, writes, salt, ctx.device_space());
    };
    ++salt;
  }
  return out;
}

GridSpec resident_spec(int n_vars) {
  GridSpec s = plan_grid_spec(n_vars);
  s.resident = true;
  return s;
}

}  // namespace

TEST_CASE("Device bodies: random plans on a resident grid run them on the device copy with program order's bits") {
  std::mt19937 rng(77u);
  Runtime runtime(runtime_options);
  int device_blocks = 0;
  for (int i = 0; i < 16; ++i) {
    const plan::Operation op = random_operation(rng, 4 + static_cast<int>(rng() % 5u), i);
    CAPTURE(op.to_json());
    const plan::KernelGraph g(op);
    const plan::Plan p = plan::Scheduler(scheduler_options()).plan(g);
    const int n_vars = static_cast<int>(op.variables.size());
    Grid reference(plan_grid_spec(n_vars));
    paint(reference);
    std::vector<std::string> reference_log, log;
    plan::Executor(op, bodies_of(op), logging_hooks(reference_log)).run_sequentially(g, reference);
    Grid resident(resident_spec(n_vars));
    paint(resident);
    std::atomic<int> calls{0};
    plan::Executor(op, bodies_of(op), device_bodies_of(op, calls), logging_hooks(log)).run(p, runtime, resident);
    REQUIRE(differing_cells(resident, reference) == 0);
    REQUIRE(log == reference_log);
    device_blocks += calls.load();
  }
  CHECK(device_blocks > 0);  // some stages ran on device teams
}

TEST_CASE("Device bodies: a stage whose actions lack one runs its host bodies; without a device copy, an error") {
  const auto op = plan::Operation::from_json(sided_example);
  const plan::KernelGraph g(op);
  const plan::Plan p = plan::Scheduler(scheduler_options()).plan(g);
  Runtime runtime(runtime_options);
  Grid reference(plan_grid_spec(3));
  paint(reference);
  std::vector<std::string> log;
  plan::Executor(op, bodies_of(op), logging_hooks(log)).run_sequentially(g, reference);
  std::atomic<int> calls{0};
  plan::DeviceActionBodies only_c = device_bodies_of(op, calls);
  only_c.erase("A");
  only_c.erase("B");
  SUBCASE("C on the device copy, A and B on the host") {
    Grid resident(resident_spec(3));
    paint(resident);
    plan::Executor(op, bodies_of(op), only_c, logging_hooks(log)).run(p, runtime, resident);
    CHECK(differing_cells(resident, reference) == 0);
    CHECK(calls.load() == resident.n_blocks());  // C is device only: every block, on the device
    // C's output, written on the device, came back to the host only when the check read it.
    CHECK(resident.residency_transfers().device_to_host > 0);
  }
  SUBCASE("a grid that keeps no device copy") {
    Grid plain(plan_grid_spec(3));
    paint(plain);
    CHECK_THROWS_WITH_AS(plan::Executor(op, bodies_of(op), only_c, logging_hooks(log)).run(p, runtime, plain),
                         doctest::Contains("keeps none: make the grid resident"), Error);
  }
  SUBCASE("a device body for an action the operation does not have") {
    plan::DeviceActionBodies extra = only_c;
    extra["Z"] = extra["C"];
    CHECK_THROWS_WITH_AS(plan::Executor(op, bodies_of(op), extra, logging_hooks(log)),
                         doctest::Contains("a device body is given for 'Z', which is not one of its actions"), Error);
  }
}
