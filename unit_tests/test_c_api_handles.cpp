// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API's handles and lifetimes (korch/korch_c.h, docs/c-api.md "Handles"): a destroyed handle,
// a handle of another kind or a stray value is an error status naming the handle and its kind;
// destroying twice is one; a running cycle's objects and the runtime cannot be destroyed from its
// routines or other threads; sizes beyond korch's limits and huge names give bounded messages.
#include <korch/korch_c.h>

#include <doctest/doctest.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string last() { return korch_last_error(); }
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One block of 8 x 8 cells, 1 guard cell, 1 variable, in tiles of 4 x 4: four items per cycle.
struct Mesh {
  std::vector<double> u = std::vector<double>(10 * 10, 1.0);
  korch_blocks* blocks = nullptr;
  explicit Mesh(const char* name = "mesh") {
    REQUIRE(korch_blocks_create(name, 1, &blocks) == KORCH_OK);
    korch_block_shape shape{{8, 8, 1}, {1, 1, 0}, {4, 4, 0}, 0, 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
    const int64_t extent[4] = {10, 10, 1, 1};
    int32_t id = -1;
    REQUIRE(korch_blocks_add(blocks, &shape, u.data(), extent, KORCH_FORTRAN_ORDER, &id) == KORCH_OK);
  }
};

int nothing(const korch_item*, double*, void*) { return 0; }

// What a routine tries against its own cycle, and the statuses and messages it got.
struct Attempts {
  korch_blocks* blocks = nullptr;
  korch_bundle* bundle = nullptr;
  korch_configuration* configuration = nullptr;
  std::mutex mutex;
  std::vector<std::pair<int, std::string>> results;  // eight per item, in order
};

// The status of each attempt and the thread's message right after it.
struct Tries {
  std::vector<std::pair<int, std::string>> got;
  void record(int status) { got.emplace_back(status, korch_last_error()); }
};

int destroy_own_cycle(const korch_item*, double*, void* user) {
  auto& a = *static_cast<Attempts*>(user);
  Tries t;
  t.record(korch_finalize());
  t.record(korch_blocks_destroy(a.blocks));
  t.record(korch_bundle_destroy(a.bundle));
  t.record(korch_configuration_destroy(a.configuration));
  t.record(korch_bundle_add(a.bundle, "B", nothing, nullptr));
  korch_block_shape shape{{2, 2, 1}, {0, 0, 0}, {0, 0, 0}, 0, 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
  double u[4] = {};
  const int64_t extent[4] = {2, 2, 1, 1};
  t.record(korch_blocks_add(a.blocks, &shape, u, extent, KORCH_FORTRAN_ORDER, nullptr));
  t.record(korch_execute(a.bundle, a.configuration, a.blocks, KORCH_ALL_BLOCKS, 0));
  t.record(korch_initialize(nullptr));
  std::lock_guard<std::mutex> lock(a.mutex);
  a.results.insert(a.results.end(), t.got.begin(), t.got.end());
  return 0;
}

}  // namespace

TEST_CASE("C API handles: double destroy, dead, wrong-kind and stray handles are error statuses naming the handle") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  Mesh mesh;
  korch_bundle* bundle = nullptr;
  REQUIRE(korch_bundle_create("steps", &bundle) == KORCH_OK);
  REQUIRE(korch_bundle_add(bundle, "A", nothing, nullptr) == KORCH_OK);
  korch_configuration* cpu = nullptr;
  REQUIRE(korch_configuration_builtin("cpu_only", &cpu) == KORCH_OK);
  REQUIRE(korch_execute(bundle, cpu, mesh.blocks, KORCH_ALL_BLOCKS, 0) == KORCH_OK);

  // A handle of another kind, and values korch never made.
  CHECK(korch_execute(bundle, cpu, reinterpret_cast<korch_blocks*>(bundle), KORCH_ALL_BLOCKS, 0) == KORCH_ERROR);
  CHECK(has(last(), "korch_execute: blocks (0x"));
  CHECK(has(last(), "is a korch_bundle handle where a korch_blocks is needed"));
  double not_a_handle = 0;
  CHECK(korch_bundle_destroy(reinterpret_cast<korch_bundle*>(&not_a_handle)) == KORCH_ERROR);
  CHECK(has(last(), "korch_bundle_destroy: bundle (0x"));
  CHECK(has(last(), "is not a handle that korch made"));
  CHECK(korch_configuration_destroy(reinterpret_cast<korch_configuration*>(uintptr_t{0xdeadbeef})) == KORCH_ERROR);
  CHECK(has(last(), "configuration (0xdeadbeef) is not a handle that korch made"));
  CHECK(korch_blocks_destroy(nullptr) == KORCH_OK);  // as free(NULL)

  // Destroyed once: every later use or destroy is an error, and another object's handle stays good.
  korch_configuration* gone = cpu;
  REQUIRE(korch_configuration_destroy(cpu) == KORCH_OK);
  CHECK(korch_configuration_destroy(gone) == KORCH_ERROR);
  CHECK(has(last(), "korch_configuration_destroy: configuration (0x"));
  CHECK(has(last(), "is a dead korch_configuration handle"));
  korch_configuration* again = nullptr;  // may take the freed slot: the old handle stays dead
  REQUIRE(korch_configuration_builtin("cpu_only", &again) == KORCH_OK);
  CHECK(again != gone);
  CHECK(korch_execute(bundle, gone, mesh.blocks, KORCH_ALL_BLOCKS, 0) == KORCH_ERROR);
  CHECK(has(last(), "dead korch_configuration handle"));
  CHECK(korch_execute(bundle, again, mesh.blocks, KORCH_ALL_BLOCKS, 0) == KORCH_OK);

  REQUIRE(korch_bundle_destroy(bundle) == KORCH_OK);
  CHECK(korch_bundle_destroy(bundle) == KORCH_ERROR);
  CHECK(has(last(), "dead korch_bundle handle"));
  CHECK(korch_execute(bundle, again, mesh.blocks, KORCH_ALL_BLOCKS, 0) == KORCH_ERROR);
  CHECK(has(last(), "korch_execute: bundle (0x"));
  CHECK(korch_bundle_add(bundle, "A", nothing, nullptr) == KORCH_ERROR);
  CHECK(has(last(), "dead korch_bundle handle"));
  REQUIRE(korch_blocks_destroy(mesh.blocks) == KORCH_OK);
  CHECK(korch_blocks_destroy(mesh.blocks) == KORCH_ERROR);
  CHECK(has(last(), "korch_blocks_destroy: blocks (0x"));
  CHECK(has(last(), "dead korch_blocks handle"));
  CHECK(korch_configuration_destroy(again) == KORCH_OK);
  CHECK(korch_finalize() == KORCH_OK);
}

TEST_CASE(
    "C API handles: from a routine, finalize, initialize, a nested execute and destroying or changing the cycle's "
    "objects "
    "are errors; 20 runs") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  for (int run = 0; run < 20; ++run) {
    CAPTURE(run);
    Mesh mesh;
    Attempts a;
    a.blocks = mesh.blocks;
    REQUIRE(korch_bundle_create("own", &a.bundle) == KORCH_OK);
    REQUIRE(korch_bundle_add(a.bundle, "A", destroy_own_cycle, &a) == KORCH_OK);
    REQUIRE(korch_configuration_builtin("cpu_only", &a.configuration) == KORCH_OK);
    REQUIRE(korch_execute(a.bundle, a.configuration, a.blocks, KORCH_ALL_BLOCKS, 0) == KORCH_OK);
    REQUIRE(a.results.size() == 4 * 8);  // four tiles, eight attempts each
    for (std::size_t i = 0; i < a.results.size(); ++i) {
      CAPTURE(a.results[i].second);
      CHECK(a.results[i].first == KORCH_ERROR);
      switch (i % 8) {
        case 0:
          CHECK(has(a.results[i].second, "korch_finalize: called from action routine 'A' while its cycle runs"));
          break;
        case 1:
          CHECK(has(a.results[i].second,
                    "korch_blocks_destroy: blocks (korch_blocks 'mesh') is in use by a running cycle"));
          break;
        case 2: CHECK(has(a.results[i].second, "korch_bundle_destroy: bundle (korch_bundle 'own') is in use")); break;
        case 3: CHECK(has(a.results[i].second, "(korch_configuration 'cpu_only') is in use")); break;
        case 4:
          CHECK(has(a.results[i].second, "korch_bundle 'own' is in use by a running cycle: change it after"));
          break;
        case 5: CHECK(has(a.results[i].second, "korch_blocks 'mesh' is in use by a running cycle")); break;
        case 6:
          CHECK(has(a.results[i].second,
                    "korch_execute: called from action routine 'A' while its cycle runs: a cycle "
                    "cannot start another"));
          break;
        default:
          CHECK(has(a.results[i].second, "korch_initialize: called from action routine 'A' while its cycle runs"));
          break;
      }
    }
    // Everything is still valid and usable after the cycle.
    CHECK(korch_execute(a.bundle, a.configuration, a.blocks, KORCH_ALL_BLOCKS, 0) == KORCH_OK);
    CHECK(korch_configuration_destroy(a.configuration) == KORCH_OK);
    CHECK(korch_bundle_destroy(a.bundle) == KORCH_OK);
    CHECK(korch_blocks_destroy(a.blocks) == KORCH_OK);
  }
  CHECK(korch_finalize() == KORCH_OK);
}

namespace {
struct Gate {
  std::atomic<bool> started{false}, release{false};
};
int wait_for_release(const korch_item*, double*, void* user) {
  auto& g = *static_cast<Gate*>(user);
  g.started = true;
  while (!g.release) std::this_thread::yield();
  return 0;
}
}  // namespace

TEST_CASE("C API handles: korch_finalize while another thread's cycle runs is an error; after it, finalize works") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  Mesh mesh;
  Gate gate;
  korch_bundle* bundle = nullptr;
  REQUIRE(korch_bundle_create("slow", &bundle) == KORCH_OK);
  REQUIRE(korch_bundle_add(bundle, "A", wait_for_release, &gate) == KORCH_OK);
  korch_configuration* cpu = nullptr;
  REQUIRE(korch_configuration_builtin("cpu_only", &cpu) == KORCH_OK);
  int status = -1;
  std::thread cycle([&] { status = korch_execute(bundle, cpu, mesh.blocks, KORCH_ALL_BLOCKS, 0); });
  while (!gate.started) std::this_thread::yield();
  CHECK(korch_finalize() == KORCH_ERROR);
  CHECK(has(last(), "korch_finalize: 1 cycle(s) of korch_execute are running on other threads"));
  CHECK(korch_bundle_destroy(bundle) == KORCH_ERROR);
  CHECK(has(last(), "is in use by a running cycle"));
  gate.release = true;
  cycle.join();
  CHECK(status == KORCH_OK);
  CHECK(korch_bundle_destroy(bundle) == KORCH_OK);
  CHECK(korch_configuration_destroy(cpu) == KORCH_OK);
  CHECK(korch_blocks_destroy(mesh.blocks) == KORCH_OK);
  CHECK(korch_finalize() == KORCH_OK);
}

TEST_CASE("C API handles: threads creating, using and destroying handles at once; each double destroy is an error") {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        korch_bundle* b = nullptr;
        if (korch_bundle_create("b", &b) != KORCH_OK) ++wrong;
        if (korch_bundle_add(b, "A", nothing, nullptr) != KORCH_OK) ++wrong;
        if (korch_bundle_destroy(b) != KORCH_OK) ++wrong;
        if (korch_bundle_destroy(b) != KORCH_ERROR) ++wrong;
        if (korch_bundle_add(b, "A", nothing, nullptr) != KORCH_ERROR) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
}

TEST_CASE("C API: block sizes beyond korch's limits are errors naming the block and the limit, checked in 64 bits") {
  korch_blocks* blocks = nullptr;
  REQUIRE(korch_blocks_create("huge", 1, &blocks) == KORCH_OK);
  double u = 0;
  const int64_t extent[4] = {1, 1, 1, 1};
  korch_block_shape shape{{INT_MAX, 1, 1}, {1, 0, 0}, {0, 0, 0}, 0, 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
  CHECK(korch_blocks_add(blocks, &shape, &u, extent, KORCH_FORTRAN_ORDER, nullptr) == KORCH_ERROR);
  CHECK(has(last(),
            "block list 'huge': block 0 stores 2147483649 cells in x (2147483647 + 2 x 1 guard cells), more "
            "than the limit of 1073741823 cells per direction"));
  shape = korch_block_shape{{1 << 20, 1 << 20, 1 << 20}, {0, 0, 0}, {0, 0, 0}, 0, 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
  korch_blocks* wide = nullptr;
  REQUIRE(korch_blocks_create("wide", INT_MAX, &wide) == KORCH_OK);
  CHECK(korch_blocks_add(wide, &shape, &u, extent, KORCH_FORTRAN_ORDER, nullptr) == KORCH_ERROR);
  CHECK(has(last(), "block list 'wide': block 0 holds more than"));
  CHECK(has(last(), "2147483647 variables of 1048576 x 1048576 x 1048576 cells"));
  shape = korch_block_shape{{1 << 20, 1 << 10, 1}, {0, 0, 0}, {1, 1, 1}, 0, 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
  CHECK(korch_blocks_add(blocks, &shape, &u, extent, KORCH_FORTRAN_ORDER, nullptr) == KORCH_ERROR);
  CHECK(has(last(), "block 0 of 1048576 x 1024 x 1 cells in tiles of 1 x 1 x 1 makes more than 16777216 tiles"));
  CHECK(korch_blocks_destroy(wide) == KORCH_OK);
  CHECK(korch_blocks_destroy(blocks) == KORCH_OK);
}

TEST_CASE("C API: a 10 MB name is quoted as a bounded excerpt in every message") {
  const std::string name(10 * 1024 * 1024, 'n');
  korch_blocks* blocks = nullptr;
  REQUIRE(korch_blocks_create(name.c_str(), 1, &blocks) == KORCH_OK);
  korch_block_shape shape{{0, 1, 1}, {0, 0, 0}, {0, 0, 0}, 0, 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
  double u = 0;
  const int64_t extent[4] = {1, 1, 1, 1};
  CHECK(korch_blocks_add(blocks, &shape, &u, extent, KORCH_FORTRAN_ORDER, nullptr) == KORCH_ERROR);
  CHECK(has(last(), "\xe2\x80\xa6 (10485760 bytes)"));
  CHECK(last().size() < 400);
  korch_bundle* bundle = nullptr;
  REQUIRE(korch_bundle_create(name.c_str(), &bundle) == KORCH_OK);
  CHECK(korch_bundle_add(bundle, name.c_str(), nullptr, nullptr) == KORCH_ERROR);
  CHECK(has(last(), "(10485760 bytes)"));
  CHECK(last().size() < 400);
  CHECK(korch_configuration_builtin(name.c_str(), nullptr) == KORCH_ERROR);
  korch_configuration* c = nullptr;
  CHECK(korch_configuration_builtin(name.c_str(), &c) == KORCH_ERROR);
  CHECK(has(last(), "(10485760 bytes)"));
  CHECK(last().size() < 600);
  const std::string json = R"({"name": ")" + name + R"(", "teams": [{"name": ")" + name + R"(", "action": "A", )" +
                           R"("input": "tiles", "threads": 99}], "distributor": {"pipelines": [")" + name + R"("]}})";
  CHECK(korch_configuration_json(json.c_str(), &c) == KORCH_ERROR);
  CHECK(has(last(), "(10485760 bytes)"));
  CHECK(last().size() < 600);
  CHECK(korch_bundle_destroy(bundle) == KORCH_OK);
  CHECK(korch_blocks_destroy(blocks) == KORCH_OK);
}
