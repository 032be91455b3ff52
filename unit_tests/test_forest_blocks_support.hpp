// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the ForestBlocks suites share: a code's own adaptive mesh whose leaves are those of a
// reference ForestMesh on one process, stored as the code stores them (Fortran arrays u(i, j, k,
// var) padded along i, guard cells NaN until filled), listed in the code's own order (Morton order
// reversed) and shared among ranks round-robin rather than along the curve.
#pragma once

#include <korch/block_list.hpp>
#include <korch/bundle.hpp>
#include <korch/communicator.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/forest_blocks.hpp>
#include <korch/forest_fill_iterator.hpp>
#include <korch/forest_mesh.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>

#include <Kokkos_Core.hpp>

#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace korch::test {

struct CodeLeaves {
  std::vector<std::vector<double>> storage;
  BlockList list{"code leaves", 1};
  std::array<int, 3> n{1, 1, 1};  // stored cells per axis
  int pad = 0, vars = 1;

  int first_rank = 0;   // ranks below it hold no leaf
  bool device = false;  // listed as device arrays (BlockArray::on_device; host memory where the device is the host)

  // Who holds a leaf, given the number of ranks; empty: spread by index (owner_of).
  using Owner = std::function<int(const BlockKey& leaf, int ranks)>;
  Owner owner;

  CodeLeaves(const ForestMesh& ref, int rank, int ranks, int first = 0, bool on_device = false)
      : list("code leaves", ref.shape().n_vars), first_rank(first), device(on_device) {
    relist(ref, rank, ranks);
  }
  CodeLeaves(const ForestMesh& ref, int rank, int ranks, Owner who)
      : list("code leaves", ref.shape().n_vars), owner(std::move(who)) {
    relist(ref, rank, ranks);
  }

  int owner_of(int leaf_index, int ranks) const { return first_rank + (7 * leaf_index + 1) % (ranks - first_rank); }

  // The code's own regrid happened in `ref`: new arrays for every leaf (allocated while the old ones
  // live, so that no address repeats), listed anew.
  void relist(const ForestMesh& ref, int rank, int ranks) {
    std::vector<std::vector<double>> old;
    old.swap(storage);
    const auto& s = ref.shape();
    vars = s.n_vars;
    for (int a = 0; a < 3; ++a) n[a] = s.cells[a] + 2 * s.guard[a];
    pad = n[0] + 1;
    list.clear();
    const auto& leaves = ref.forest().leaves();
    for (int index = static_cast<int>(leaves.size()) - 1; index >= 0; --index) {
      const int holder = owner ? owner(leaves[static_cast<std::size_t>(index)], ranks) : owner_of(index, ranks);
      if (holder != rank) continue;
      storage.emplace_back(static_cast<std::size_t>(pad * n[1] * n[2] * vars),
                           std::numeric_limits<double>::quiet_NaN());
      const BlockArray& r = ref.array(index);
      for (int v = 0; v < vars; ++v)
        for (int k = s.guard[2]; k < s.guard[2] + s.cells[2]; ++k)
          for (int j = s.guard[1]; j < s.guard[1] + s.cells[1]; ++j)
            for (int i = s.guard[0]; i < s.guard[0] + s.cells[0]; ++i)
              at(static_cast<int>(storage.size()) - 1, v, i, j, k) =
                  r.data[v * r.stride[0] + i * r.stride[1] + j * r.stride[2] + k * r.stride[3]];
      BlockShape shape;
      shape.cells = s.cells;
      shape.guard = s.guard;
      shape.level = leaves[static_cast<std::size_t>(index)].level;
      for (int a = 0; a < 3; ++a)
        shape.index[a] = static_cast<int>(leaves[static_cast<std::size_t>(index)].position[a]);
      const std::array<std::ptrdiff_t, 4> extents{n[0], n[1], n[2], vars},
          strides{1, pad, pad * n[1], pad * n[1] * n[2]};
      list.add(shape, device ? BlockArray::on_device(storage.back().data(), IndexOrder::i_j_k_var, extents, strides)
                             : BlockArray::of(storage.back().data(), IndexOrder::i_j_k_var, extents, strides));
    }
  }
  double& at(int b, int v, int i, int j, int k) {
    return storage[static_cast<std::size_t>(b)][static_cast<std::size_t>(i + pad * (j + n[1] * (k + n[2] * v)))];
  }
  // Cells of block b (guard cells too) whose bits differ from the same leaf of `ref`.
  int differences(int b, const ForestMesh& ref, const BlockKey& key) {
    const BlockArray& r = ref.array(ref.forest().leaf_index(key));
    int wrong = 0;
    for (int v = 0; v < vars; ++v)
      for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
          for (int i = 0; i < n[0]; ++i) {
            const double want = r.data[v * r.stride[0] + i * r.stride[1] + j * r.stride[2] + k * r.stride[3]];
            const double got = at(b, v, i, j, k);
            wrong += !(got == want || (std::isnan(got) && std::isnan(want)));
          }
    return wrong;
  }
};

// One cycle over the code's list with the iterator; returns the cells of this process's leaves
// that differ from the reference, summed over the ranks, and counts the leaves handed out.
inline int fill_cycle(ForestBlocks& mesh, CodeLeaves& code, const ForestMesh& ref, ForestFillIterator::Fill fill,
                      int& handed) {
  std::atomic<int> seen{0};
  Bundle bundle("fill only");
  bundle.add(std::move(TypedAction("look")
                           .on_box([&](const ActionContext&, const auto& box) {
                             if (fill == ForestFillIterator::Fill::by_the_action) mesh.fill_guard_cells(box.block_id());
                             ++seen;
                           })
                           .reads_guard_cells(1)));
  Runtime runtime;
  ForestFillIterator leaves(mesh, 0, -1, fill);
  // A rank without leaves has no cycle to run (and no copies to send or receive).
  if (code.list.n_blocks() > 0) runtime.execute(bundle, configurations::get("cpu_only", {"look"}), code.list, &leaves);
  handed = seen.load();
  int wrong = 0;
  for (int b = 0; b < code.list.n_blocks(); ++b)
    wrong += code.differences(b, ref, mesh.own_leaves()[static_cast<std::size_t>(b)]);
  return static_cast<int>(Communicator::world().sum(wrong));
}

using DeviceLeaf = Kokkos::View<double****, Kokkos::LayoutLeft, DeviceMemSpace>;

// Every leaf of `ref` owned by this rank (round robin) as a Fortran-ordered View in korch's device
// memory space, interior cells copied from the reference, guard cells NaN.
inline std::vector<DeviceLeaf> device_leaves(const ForestMesh& ref, BlockList& list, int rank, int ranks) {
  std::vector<DeviceLeaf> views;
  const auto& s = ref.shape();
  const std::array<int, 3> n{s.cells[0] + 2 * s.guard[0], s.cells[1] + 2 * s.guard[1], s.cells[2] + 2 * s.guard[2]};
  for (int leaf = 0; leaf < ref.forest().n_leaves(); ++leaf) {
    if (leaf % ranks != rank) continue;
    views.emplace_back("leaf", n[0], n[1], n[2], s.n_vars);
    auto host = Kokkos::create_mirror_view(views.back());
    const BlockArray& r = ref.array(leaf);
    for (int v = 0; v < s.n_vars; ++v)
      for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
          for (int i = 0; i < n[0]; ++i) {
            const bool interior = i >= s.guard[0] && i < s.guard[0] + s.cells[0] && j >= s.guard[1] &&
                                  j < s.guard[1] + s.cells[1] && k >= s.guard[2] && k < s.guard[2] + s.cells[2];
            host(i, j, k, v) = interior ? r.data[v * r.stride[0] + i * r.stride[1] + j * r.stride[2] + k * r.stride[3]]
                                        : std::numeric_limits<double>::quiet_NaN();
          }
    Kokkos::deep_copy(views.back(), host);
    BlockShape shape;
    shape.cells = s.cells;
    shape.guard = s.guard;
    const BlockKey& key = ref.forest().leaves()[static_cast<std::size_t>(leaf)];
    shape.level = key.level;
    for (int a = 0; a < 3; ++a) shape.index[a] = static_cast<int>(key.position[a]);
    list.add(shape, BlockArray::on_device(views.back(), IndexOrder::i_j_k_var));
  }
  return views;
}

// Cells of the views (guard cells too, copied back to the host) whose bits differ from the reference.
inline int device_differences(const ForestMesh& ref, const ForestBlocks& mesh, const std::vector<DeviceLeaf>& views) {
  int wrong = 0;
  for (std::size_t b = 0; b < views.size(); ++b) {
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, views[b]);
    const BlockArray& r = ref.array(ref.forest().leaf_index(mesh.own_leaves()[b]));
    for (int v = 0; v < static_cast<int>(host.extent(3)); ++v)
      for (int k = 0; k < static_cast<int>(host.extent(2)); ++k)
        for (int j = 0; j < static_cast<int>(host.extent(1)); ++j)
          for (int i = 0; i < static_cast<int>(host.extent(0)); ++i)
            wrong +=
                !(host(i, j, k, v) == r.data[v * r.stride[0] + i * r.stride[1] + j * r.stride[2] + k * r.stride[3]]);
  }
  return wrong;
}

}  // namespace korch::test
