// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runtime::execute called from several threads at once and from inside a cycle: callers take
// turns, failures stay with their caller, nothing hangs, and the runtime stays usable.
#include "test_error_support.hpp"
#include "test_runtime_support.hpp"

#include <korch/configurations/builtin.hpp>
#include <korch/runtime.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <thread>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_runtime_concurrency {

using namespace korch;
using namespace korch::test;

namespace {

GridSpec small_spec() {
  GridSpec s;
  s.block_cells = {8, 8, 8};
  s.blocks = {2, 1, 1};
  s.guard = 1;
  s.n_vars = 3;
  s.tile_cells = {4, 4, 4};
  return s;
}

const Affine A{"A", 0, 0, 2.0, 0.0, 1.0};  // v0 = 2 v0 + 1

// Runs `body` on a separate thread; if it has not finished after `limit`, the process ends with a
// message: a hang must fail the suite, not stall it until ctest's timeout.
template <class F>
void with_watchdog(std::chrono::seconds limit, F&& body) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread worker([&] {
    body();
    std::lock_guard<std::mutex> lock(m);
    done = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(m);
  if (!cv.wait_for(lock, limit, [&] { return done; })) {
    std::fprintf(stderr, "watchdog: Runtime::execute did not return within %lld s (hang)\n",
                 static_cast<long long>(limit.count()));
    std::_Exit(3);
  }
  lock.unlock();
  worker.join();
}

}  // namespace

TEST_CASE(
    "Runtime: execute from 2, 4 and 8 threads, 1000 calls each of good and failing bundles: callers take turns, each "
    "call "
    "completes or throws its own cycle's error, and the next cycle works") {
  RuntimeOptions options;
  options.n_teams = 3;
  options.threads_per_team = 2;
  options.n_helpers = 3;
  options.helper_threads = 1;
  Runtime rt(options);
  const char* configs[] = {"cpu_only", "gpu_only", "cpu_gpu_data_parallel"};
  for (int n_threads : {2, 4, 8}) {
    CAPTURE(n_threads);
    const int calls_per_thread = 1000 / n_threads;
    std::atomic<int> completed{0}, failed{0}, wrong{0};
    // Grids are made here: allocating a View dispatches to the default host space, which Kokkos
    // 3.4's OpenMP allows only from the thread that initialized Kokkos. The callers touch them on
    // the host alone (fill, reference, comparison), as a physics code's threads would.
    std::vector<Grid> grids, references;
    for (int t = 0; t < n_threads; ++t) {
      grids.emplace_back(small_spec());
      references.emplace_back(small_spec());
      fill_pattern(references.back());
      apply_reference(references.back(), {A});
    }
    with_watchdog(std::chrono::seconds(120), [&] {
      std::vector<std::thread> callers;
      for (int t = 0; t < n_threads; ++t) {
        callers.emplace_back([&, t] {
          std::mt19937 rng(static_cast<unsigned>(1000 * n_threads + t));
          Grid& grid = grids[static_cast<std::size_t>(t)];
          const Grid& reference = references[static_cast<std::size_t>(t)];
          for (int k = 0; k < calls_per_thread; ++k) {
            const bool fail = rng() % 3 == 0;
            const Configuration& cfg = configurations::get(configs[rng() % 3]);
            fill_pattern(grid);
            Bundle b("concurrent");
            if (fail) {
              b.add(ActionRoutine("A", [t, k](const ActionContext&, DataItem&) {
                throw std::runtime_error("caller " + std::to_string(t) + " call " + std::to_string(k));
              }));
            } else {
              b.add(affine_routine(A, nullptr));
            }
            try {
              rt.execute(b, cfg, grid);
              if (fail || grid.max_interior_difference(reference) != 0.0) ++wrong;
              ++completed;
            } catch (const Error& e) {
              // The error is this call's own: it names this caller's throwing action.
              const std::string what = e.what();
              if (!fail || what.find("caller " + std::to_string(t) + " call " + std::to_string(k)) == std::string::npos)
                ++wrong;
              ++failed;
            }
          }
        });
      }
      for (auto& c : callers) c.join();
    });
    CHECK(wrong == 0);
    CHECK(completed + failed == n_threads * calls_per_thread);
    CHECK(completed > 0);
    CHECK(failed > 0);
    CHECK(rt.pinned_pool().outstanding_bytes() == 0);
    CHECK(rt.device_pool().outstanding_bytes() == 0);
    for (unsigned i = 0; i < options.n_teams; ++i) CHECK(rt.team(i).mode() == TeamMode::Idle);
  }
  // The runtime still runs a cycle with the exact result.
  Grid grid(small_spec());
  fill_pattern(grid);
  Grid reference = grid.clone();
  apply_reference(reference, {A});
  rt.execute(Bundle("after").add(affine_routine(A, nullptr)), configurations::get("cpu_only"), grid);
  CHECK(grid.max_interior_difference(reference) == 0.0);
}

TEST_CASE("Runtime: execute from an action routine of the running cycle is a korch::Error, not a deadlock") {
  Runtime rt(RuntimeOptions{2, 2, 2, 1, {}, 0, 0});
  Grid grid(small_spec());
  std::atomic<int> nested_errors{0};
  std::string message;
  std::mutex m;
  Bundle inner("inner");
  inner.add(affine_routine(A, nullptr));
  Grid other(small_spec());
  Bundle outer("outer");
  outer.add(ActionRoutine("A", [&](const ActionContext&, DataItem&) {
    try {
      rt.execute(inner, configurations::get("cpu_only"), other);
    } catch (const Error& e) {
      ++nested_errors;
      std::lock_guard<std::mutex> lock(m);
      message = e.what();
    }
  }));
  with_watchdog(std::chrono::seconds(60), [&] { rt.execute(outer, configurations::get("cpu_only"), grid); });
  CHECK(nested_errors > 0);
  CHECK(contains(message, "called from a thread of team"));
  CHECK(contains(message, "could never start"));
}

}  // namespace test_runtime_concurrency
