// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API's readiness of blocks (korch_ready_*, korch_execute_ready): a code that fills its
// Fortran-ordered blocks' guard cells itself marks them from its poll routine as its fill completes
// them, and the cycle's routine sees every guard cell filled; a poll routine's failure and a fill
// that stalls are statuses whose messages name them.
#include <korch/korch_c.h>

#include <doctest/doctest.h>

#include <string>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_c_api_ready {

namespace {

// A ring of blocks u(0:n+1, var) (Fortran order, one guard cell each side, 2 variables), periodic.
constexpr int n = 11, stored = n + 2, n_blocks = 6;

struct Code {
  std::vector<std::vector<double>> u;
  std::vector<int> unfilled;  // the blocks whose "messages" have not arrived, in arrival order
  int poll_status = 0;
  double& at(int b, int var, int i) {
    return u[static_cast<std::size_t>(b)][static_cast<std::size_t>(i + stored * var)];
  }
  void fill(int b) {
    at(b, 0, 0) = at((b + n_blocks - 1) % n_blocks, 0, n);
    at(b, 0, n + 1) = at((b + 1) % n_blocks, 0, 1);
  }
};

// One block's halo arrives per call: fill it, mark it.
int poll(korch_ready* ready, void* user) {
  auto& code = *static_cast<Code*>(user);
  if (code.poll_status != 0) {
    korch_routine_message("request 4 was cancelled");
    return code.poll_status;
  }
  if (code.unfilled.empty()) return 0;
  const int b = code.unfilled.back();
  code.unfilled.pop_back();
  code.fill(b);
  return korch_ready_mark(ready, b);
}

// v1 = v0(i - 1) + v0(i + 1) over the item's cells (interior numbered from 1).
int stencil(const korch_item* item, double* u, void*) {
  for (int i = item->lo[0]; i <= item->hi[0]; ++i) {
    const auto at = [&](int var, int ii) {
      return u[var * item->stride[0] + (ii + item->guard[0] - 1) * item->stride[1]];
    };
    u[1 * item->stride[0] + (i + item->guard[0] - 1) * item->stride[1]] = at(0, i - 1) + at(0, i + 1);
  }
  return 0;
}

std::string last() { return korch_last_error(); }

}  // namespace

TEST_CASE("C API: blocks marked ready by the code's poll routine run with every guard cell filled") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  Code code;
  korch_blocks* mesh = nullptr;
  REQUIRE(korch_blocks_create("ring", 2, &mesh) == KORCH_OK);
  for (int b = 0; b < n_blocks; ++b) {
    code.u.emplace_back(stored * 2, -1e30);  // guard cells stale until the code fills them
    for (int i = 1; i <= n; ++i) code.at(b, 0, i) = 10.0 * b + i;
  }
  for (int b = 0; b < n_blocks; ++b) {
    korch_block_shape shape{{n, 1, 1}, {1, 0, 0}, {4, 0, 0}, 0, 1, {1.0 * n * b, 0, 0}, {1, 1, 1}, {0, 0, 0}};
    const int64_t extent[4] = {stored, 1, 1, 2};
    int32_t id = -1;
    REQUIRE(korch_blocks_add(mesh, &shape, code.u[static_cast<std::size_t>(b)].data(), extent, KORCH_FORTRAN_ORDER,
                             &id) == KORCH_OK);
  }
  korch_bundle* bundle = nullptr;
  REQUIRE(korch_bundle_create("ready", &bundle) == KORCH_OK);
  REQUIRE(korch_bundle_add(bundle, "A", stencil, nullptr) == KORCH_OK);
  korch_configuration* cpu = nullptr;
  REQUIRE(korch_configuration_builtin("cpu_only", &cpu) == KORCH_OK);
  korch_ready* ready = nullptr;
  REQUIRE(korch_ready_create(mesh, poll, &code, 0.0, &ready) == KORCH_OK);

  code.unfilled = {3, 0, 5, 1, 4, 2};
  REQUIRE(korch_execute_ready(bundle, cpu, ready) == KORCH_OK);
  for (int b = 0; b < n_blocks; ++b)
    for (int i = 1; i <= n; ++i) {
      const double lo = i == 1 ? code.at((b + n_blocks - 1) % n_blocks, 0, n) : code.at(b, 0, i - 1);
      const double hi = i == n ? code.at((b + 1) % n_blocks, 0, 1) : code.at(b, 0, i + 1);
      CHECK(code.at(b, 1, i) == lo + hi);
    }

  // The poll routine fails: the cycle stops, the status names it with its message.
  code.poll_status = 3;
  CHECK(korch_execute_ready(bundle, cpu, ready) == KORCH_ERROR);
  CHECK(last().find("the poll routine of korch_ready of korch_blocks 'ring' returned status 3: request 4 was "
                    "cancelled") != std::string::npos);
  // A fill that stops before the last block: a stall, naming the blocks left.
  korch_ready* quick = nullptr;
  REQUIRE(korch_ready_create(mesh, poll, &code, 0.05, &quick) == KORCH_OK);
  code.poll_status = 0;
  code.unfilled = {5, 4, 3};
  CHECK(korch_execute_ready(bundle, cpu, quick) == KORCH_ERROR);
  CHECK(last().find("with 3 of 6 unmarked (blocks 0, 1, 2)") != std::string::npos);
  // Marks for the next cycle; wrong ones refused.
  CHECK(korch_ready_mark(quick, -2) == KORCH_ERROR);
  CHECK(last().find("korch_ready_mark: ready blocks: block -2") != std::string::npos);
  CHECK(korch_ready_mark(quick, 1) == KORCH_OK);
  CHECK(korch_ready_mark(quick, 1) == KORCH_ERROR);
  CHECK(korch_ready_clear(quick) == KORCH_OK);
  CHECK(korch_ready_mark(quick, 1) == KORCH_OK);
  CHECK(korch_ready_clear(quick) == KORCH_OK);
  korch_ready* refused = nullptr;
  CHECK(korch_ready_create(mesh, poll, &code, -1.0, &refused) == KORCH_ERROR);
  CHECK(refused == nullptr);
  CHECK(last().find("stall_seconds is -1") != std::string::npos);
  CHECK(korch_execute_ready(bundle, cpu, reinterpret_cast<korch_ready*>(mesh)) == KORCH_ERROR);
  CHECK(last().find("korch_ready") != std::string::npos);

  // The blocks' handle may go first: the readiness keeps them.
  CHECK(korch_blocks_destroy(mesh) == KORCH_OK);
  code.unfilled = {0, 1, 2, 3, 4, 5};
  CHECK(korch_execute_ready(bundle, cpu, quick) == KORCH_OK);
  CHECK(korch_ready_destroy(quick) == KORCH_OK);
  CHECK(korch_ready_destroy(quick) == KORCH_ERROR);
  CHECK(korch_ready_destroy(ready) == KORCH_OK);
  CHECK(korch_configuration_destroy(cpu) == KORCH_OK);
  CHECK(korch_bundle_destroy(bundle) == KORCH_OK);
  CHECK(korch_finalize() == KORCH_OK);
}

}  // namespace test_c_api_ready
