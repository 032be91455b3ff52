// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A code's own blocks in device memory (BlockArray::on_device, docs/residency.md): every
// configuration gives the cells of the same code on host arrays, device cycles move no state
// between host and device, host cycles hand their results back to the code's arrays by the end
// of the cycle, and the cells of variables the list does not see are never written, whatever the
// layout (used in place, gathered on the device, or staged through a compact buffer).
#include "test_runtime_support.hpp"

#include <korch/block_list.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/packet_pack.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_device_block_list {

using namespace korch;
using namespace korch::test;

namespace {

constexpr int n_vars = 3;
constexpr double sentinel = -7.0;

// One block's array: the code's storage (all of it, padding and unseen variables included), and
// where the list's cells are in it.
struct CodeArray {
  std::array<int, 3> cells{}, guard{};
  std::ptrdiff_t first = 0;                // the list's (var 0, i 0, j 0, k 0) in the storage
  std::array<std::ptrdiff_t, 4> stride{};  // (var, i, j, k)
  std::array<std::ptrdiff_t, 4> extent{};  // (var, i, j, k)
  std::size_t size = 0;                    // doubles in the storage
  std::ptrdiff_t offset(int v, int i, int j, int k) const {
    return first + v * stride[0] + i * stride[1] + j * stride[2] + k * stride[3];
  }
};

// Four layouts a code might have: Fortran u(i, j, k, var) with padded rows (staged and gathered),
// korch's own (var, i, j, k) LayoutRight (used in place), variables interleaved with two the list
// does not see (staged and gathered), and (var, i, j, k) with padding between variables (in place).
std::vector<CodeArray> code_layouts() {
  std::vector<CodeArray> out;
  const auto stored = [](const CodeArray& a, int d) {
    return static_cast<std::ptrdiff_t>(a.cells[d] + 2 * a.guard[d]);
  };
  CodeArray fortran{{7, 5, 3}, {2, 1, 1}};
  {
    const std::ptrdiff_t row = stored(fortran, 0) + 2, e1 = stored(fortran, 1), e2 = stored(fortran, 2);
    fortran.stride = {row * e1 * e2, 1, row, row * e1};
    fortran.size = static_cast<std::size_t>(row * e1 * e2 * n_vars);
  }
  CodeArray right{{5, 6, 1}, {1, 2, 0}};
  {
    const std::ptrdiff_t e0 = stored(right, 0), e1 = stored(right, 1), e2 = stored(right, 2);
    right.stride = {e0 * e1 * e2, e1 * e2, e2, 1};
    right.size = static_cast<std::size_t>(e0 * e1 * e2 * n_vars);
  }
  CodeArray interleaved{{4, 3, 2}, {1, 1, 1}};
  {
    const std::ptrdiff_t total = n_vars + 2, e1 = stored(interleaved, 1), e2 = stored(interleaved, 2);
    interleaved.first = 1;  // variables 1..3 of 0..4
    interleaved.stride = {1, total * e1 * e2, total * e2, total};
    interleaved.size = static_cast<std::size_t>(total * stored(interleaved, 0) * e1 * e2);
  }
  CodeArray padded{{6, 4, 1}, {2, 2, 0}};
  {
    const std::ptrdiff_t e0 = stored(padded, 0), e1 = stored(padded, 1), e2 = stored(padded, 2);
    padded.stride = {e0 * e1 * e2 + 7, e1 * e2, e2, 1};
    padded.size = static_cast<std::size_t>((e0 * e1 * e2 + 7) * n_vars);
  }
  for (CodeArray a : {fortran, right, interleaved, padded}) {
    a.extent = {n_vars, stored(a, 0), stored(a, 1), stored(a, 2)};
    out.push_back(a);
  }
  return out;
}

using DeviceDoubles = Kokkos::View<double*, DeviceMemSpace>;

// The same code twice: its arrays on the host (a list of host arrays) and in device memory (a list
// of device arrays), the same cells in the same layouts.
struct TwoCodes {
  std::vector<CodeArray> layout = code_layouts();
  std::vector<std::vector<double>> host;
  std::vector<DeviceDoubles> device;
  BlockList host_list{"host code", n_vars};
  BlockList device_list{"device code", n_vars};

  TwoCodes() {
    for (const CodeArray& a : layout) {
      std::vector<double> cells(a.size, sentinel);
      for (int v = 0; v < n_vars; ++v)
        for (int i = 0; i < a.extent[1]; ++i)
          for (int j = 0; j < a.extent[2]; ++j)
            for (int k = 0; k < a.extent[3]; ++k)
              cells[static_cast<std::size_t>(a.offset(v, i, j, k))] =
                  0.25 * static_cast<double>(host.size()) + 0.5 * v + 0.01 * i + 0.02 * j + 0.03 * k;
      DeviceDoubles d("code block", a.size);
      Kokkos::deep_copy(d, Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                               cells.data(), cells.size()));
      host.push_back(std::move(cells));
      device.push_back(d);
      BlockShape shape;
      shape.cells = a.cells;
      shape.guard = a.guard;
      shape.tile_cells = {3, 4, 0};
      const auto order = IndexOrder::var_i_j_k;
      host_list.add(shape, BlockArray::of(host.back().data() + a.first, order, a.extent, a.stride));
      device_list.add(shape, BlockArray::on_device(d.data() + a.first, order, a.extent, a.stride));
    }
  }
  // The code's device storage, read back through Kokkos (not through korch).
  std::vector<double> device_storage(std::size_t b) const {
    std::vector<double> out(layout[b].size);
    Kokkos::deep_copy(
        Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(out.data(), out.size()),
        device[b]);
    return out;
  }
  // Every double of the device storage (padding and unseen variables included) against the host's.
  bool same_storage() const {
    for (std::size_t b = 0; b < layout.size(); ++b)
      if (device_storage(b) != host[b]) return false;
    return true;
  }
  std::uint64_t moved() const { return device_list.device_residency()->transfers().total(); }
};

Bundle affine_bundle(const std::vector<Affine>& actions) {
  Bundle b("device list");
  for (const auto& f : actions) b.add(affine_routine(f, nullptr));
  return b;
}

template <class Space>
void add_on_pack(const Space& space, const PacketPack& p) {
  Kokkos::parallel_for(
      p.policy(space), KOKKOS_LAMBDA(int e, int i, int j, int k) {
        if (p.updates(e, i, j, k)) p(e, 2, i, j, k) = 2.0 * p(e, 1, i, j, k) + p(e, 2, i, j, k) - p(e, 0, i, j, k);
      });
}

}  // namespace

TEST_CASE("Device block list: gpu_only uses the code's device arrays where they are and moves no state across") {
  Runtime rt;
  TwoCodes code;
  REQUIRE(code.device_list.on_device());
  CHECK_FALSE(code.host_list.on_device());
  const Bundle bundle = affine_bundle({{"A", 0, 1, 0.5, 0.75, 0.125}});
  const Configuration gpu = configurations::get("gpu_only");
  for (int cycle = 0; cycle < 3; ++cycle) {
    CAPTURE(cycle);
    rt.execute(bundle, gpu, code.device_list);
    const TransferBytes packets = rt.last_transfers();
    rt.execute(bundle, gpu, code.host_list);
    CHECK(code.moved() == 0);  // nothing between host and device: the arrays are the device's
    // Packet metadata only, against every variable of every block for the host list's packets.
    CHECK(packets.total() < rt.last_transfers().total() / 4);
    CHECK(code.same_storage());
  }
}

TEST_CASE("Device block list: a PacketPack kernel addresses arrays in place and gathered") {
  Runtime rt;
  TwoCodes code;
  const ActionRoutine pack_action = TypedAction("A").on_packet(
      [](const ActionContext& ctx, const PacketPack& p) { add_on_pack(ctx.device_space(), p); });
  Bundle bundle("pack");
  bundle.add(pack_action);
  Configuration gpu = configurations::get("gpu_only");
  for (auto& h : gpu.helpers)
    if (h.name == "to_gpu") {
      h.variables.copy_in = {0, 1};
      h.variables.copy_in_out = {2};
    }
  for (int cycle = 0; cycle < 3; ++cycle) {
    rt.execute(bundle, gpu, code.device_list);
    rt.execute(bundle, gpu, code.host_list);
  }
  CHECK(code.moved() == 0);
  CHECK(code.same_storage());
}

TEST_CASE("Device block list: a random sequence of configurations gives the host arrays' cells bit for bit") {
  Runtime rt;
  TwoCodes code;
  const char* names[] = {"cpu_only", "gpu_only", "cpu_gpu_data_parallel", "cpu_gpu_action_parallel"};
  const Bundle one = affine_bundle({{"A", 0, 1, 0.5, 0.75, 0.125}});
  const Bundle two = affine_bundle({{"A", 0, 0, 0.5, 0.25, 1.0}, {"B", 1, 1, 2.0, -0.5, 0.25}});
  std::mt19937 random(20261129);
  for (int cycle = 0; cycle < 24; ++cycle) {
    const std::string name = names[random() % 4];
    CAPTURE(cycle);
    CAPTURE(name);
    const Bundle& bundle = name == "cpu_gpu_action_parallel" ? two : one;
    const Configuration c = configurations::get(name);
    rt.execute(bundle, c, code.device_list);
    rt.execute(bundle, c, code.host_list);
    // The code's arrays hold the cycle's results as soon as it returns, whichever side computed them.
    REQUIRE(code.same_storage());
    for (int b = 0; b < code.device_list.n_blocks(); ++b)
      for (int v = 0; v < n_vars; ++v) CHECK_FALSE(code.device_list.device_residency()->host_valid(b, v));
  }
}

TEST_CASE("Device block list: a host cycle moves the blocks it computes down and back up, nothing more") {
  Runtime rt;
  TwoCodes code;
  const Bundle bundle = affine_bundle({{"A", 0, 1, 0.5, 0.75, 0.125}});
  rt.execute(bundle, configurations::get("cpu_only"), code.device_list);
  rt.execute(bundle, configurations::get("cpu_only"), code.host_list);
  std::uint64_t cells = 0;
  for (const CodeArray& a : code.layout) cells += static_cast<std::uint64_t>(a.extent[1] * a.extent[2] * a.extent[3]);
  const TransferBytes moved = code.device_list.device_residency()->transfers();
  CHECK(moved.device_to_host == cells * n_vars * sizeof(double));
  CHECK(moved.host_to_device == cells * n_vars * sizeof(double));
  CHECK(code.same_storage());
}

TEST_CASE("Device block list: writes through block_view reach the code's array at synchronize()") {
  TwoCodes code;
  const BlockView view = code.device_list.block_view(2);  // the interleaved layout
  view(1, 2, 1, 1) = 42.0;
  CHECK(code.device_storage(2)[static_cast<std::size_t>(code.layout[2].offset(1, 2, 1, 1))] != 42.0);
  code.device_list.synchronize();
  const std::vector<double> after = code.device_storage(2);
  CHECK(after[static_cast<std::size_t>(code.layout[2].offset(1, 2, 1, 1))] == 42.0);
  code.host[2][static_cast<std::size_t>(code.layout[2].offset(1, 2, 1, 1))] = 42.0;
  CHECK(code.same_storage());  // the unseen variables kept their sentinels
}

TEST_CASE("Device block list: host and device arrays in one list are refused, naming the block") {
  std::vector<double> host(4 * 4 * n_vars, 0.0);
  DeviceDoubles device("device block", 4 * 4 * n_vars);
  BlockShape shape;
  shape.cells = {4, 4, 1};
  BlockList list("mixed", n_vars);
  list.add(shape, BlockArray::on_device(device.data(), IndexOrder::var_i_j_k, {n_vars, 4, 4, 1}, {16, 4, 1, 1}));
  CHECK_THROWS_WITH_AS(
      list.add(shape, BlockArray::of(host.data(), IndexOrder::var_i_j_k, {n_vars, 4, 4, 1}, {16, 4, 1, 1})),
      doctest::Contains("block 1 is an array in host memory but the list's blocks are in device"), Error);
  CHECK(list.n_blocks() == 1);
}

}  // namespace test_device_block_list
