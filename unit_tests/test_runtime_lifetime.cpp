// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A Runtime destroyed by an action routine of its own cycle (runtime.hpp, docs/runtime-lifetime.md):
// the cycle runs to its end on teams that live on, its caller gets a korch::Error, and a new Runtime
// can be made at once. Repeated, since the race it guards against (the cycle reading teams a
// destructor freed) showed in some runs only; the ASan build checks that nothing freed is read.
#include "test_error_support.hpp"
#include "test_runtime_support.hpp"

#include <korch/auxiliary_cycle.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/runtime.hpp>

#include <atomic>
#include <thread>

using namespace korch;
using namespace korch::test;

namespace {

GridSpec lifetime_spec() {
  GridSpec s;
  s.block_cells = {8, 8, 1};
  s.blocks = {4, 2, 1};
  s.guard = 1;
  s.n_vars = 1;
  s.tile_cells = {4, 4, 1};
  return s;
}

}  // namespace

TEST_CASE(
    "Runtime: deleted by a routine of its own cycle, 50 times: the cycle ends, its caller gets an Error, no use after "
    "free") {
  for (int run = 0; run < 50; ++run) {
    CAPTURE(run);
    std::atomic<Runtime*> victim{new Runtime(RuntimeOptions{2, 2, 1, 1, {}, 0, 0})};
    Runtime* const rt = victim.load();
    Grid grid(lifetime_spec());
    std::atomic<int> items{0};
    Bundle bundle("deleting");
    bundle.add(ActionRoutine("A", [&](const ActionContext&, DataItem&) {
      // Every other item, so that some run before the deletion, some after and some at once.
      if (items.fetch_add(1) % 2 == 1) delete victim.exchange(nullptr);
    }));
    const std::string message = error_of([&] { rt->execute(bundle, configurations::get("cpu_only"), grid); });
    CHECK(contains(message, "destroyed during its own execute('cpu_only')"));
    CHECK(contains(message, "the cycle ran to its end"));
    CHECK(items == 32);  // 8 blocks of 4 tiles: every item ran
    CHECK(victim.load() == nullptr);
    CHECK_FALSE(Runtime::exists());
    // A new runtime can be made and runs.
    Runtime next(RuntimeOptions{1, 2, 1, 1, {}, 0, 0});
    Bundle plain("plain");
    plain.add(ActionRoutine("A", [](const ActionContext&, DataItem&) {}));
    CHECK_NOTHROW(next.execute(plain, configurations::get("cpu_only"), grid));
  }
}

TEST_CASE("Runtime: deleted by a failing cycle's routine, the caller's Error names both the deletion and the failure") {
  std::atomic<Runtime*> victim{new Runtime(RuntimeOptions{1, 2, 1, 1, {}, 0, 0})};
  Runtime* const rt = victim.load();
  Grid grid(lifetime_spec());
  Bundle bundle("failing");
  bundle.add(ActionRoutine("A", [&](const ActionContext&, DataItem&) {
    delete victim.exchange(nullptr);
    throw Error("routine A fails after deleting the runtime");
  }));
  const std::string message = error_of([&] { rt->execute(bundle, configurations::get("cpu_only"), grid); });
  CHECK(contains(message, "destroyed during its own execute"));
  CHECK(contains(message, "the cycle also failed"));
  CHECK(contains(message, "routine A fails after deleting the runtime"));
  CHECK_FALSE(Runtime::exists());
}

TEST_CASE("Runtime: deleted by its own auxiliary routine: run_auxiliary throws an Error naming it") {
  for (int run = 0; run < 50; ++run) {
    CAPTURE(run);
    std::atomic<Runtime*> victim{new Runtime(RuntimeOptions{1, 2, 1, 1, {}, 0, 0})};
    Runtime* const rt = victim.load();
    const AuxiliaryRoutine routine("reset", [&](const ActionContext&) { delete victim.exchange(nullptr); });
    const std::string message = error_of([&] { rt->run_auxiliary(routine); });
    CHECK(contains(message, "destroyed during its own run_auxiliary('reset')"));
    CHECK_FALSE(Runtime::exists());
  }
}

TEST_CASE(
    "Runtime: destroyed on another thread while a cycle runs, it waits for the cycle; a caller still waiting gets an "
    "Error") {
  auto rt = std::make_unique<Runtime>(RuntimeOptions{1, 2, 1, 1, {}, 0, 0});
  Grid grid(lifetime_spec());
  std::atomic<bool> started{false}, release{false};
  Bundle slow("slow");
  slow.add(ActionRoutine("A", [&](const ActionContext&, DataItem&) {
    started = true;
    while (!release) std::this_thread::yield();
  }));
  std::string first;
  std::thread cycle([&] { first = error_of([&] { rt->execute(slow, configurations::get("cpu_only"), grid); }); });
  while (!started) std::this_thread::yield();
  std::thread destroyer([&] { rt.reset(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(Runtime::exists());  // the destructor waits for the running cycle
  release = true;
  destroyer.join();
  cycle.join();
  CHECK(first.empty());  // that cycle ended normally
  CHECK_FALSE(Runtime::exists());
}
