// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestBlocks: a physics code's own adaptive mesh, its leaves in the code's own BlockList
// (docs/adaptive-mesh.md, "A code's own adaptive blocks"). The code keeps its tree, its arrays (any
// layout, host or device memory) and its regrids; each block it lists names its place in the tree through
// BlockShape::level and BlockShape::index (its position among all blocks of that level), and every
// block has the same cells and guard cells. korch builds the forest from every rank's lists and fills
// guard cells across levels as for its own ForestMesh: same-level copies, restriction from finer
// leaves, conservative prolongation from coarser ones, copies of other ranks' leaves by message,
// inside a cycle with ForestFillIterator. After its own regrid the code lists its leaves anew and
// calls relist() on every rank; korch then plans again, and a cycle on a list changed without
// relist() is refused on the rank whose list changed.
//
//   korch::BlockList leaves("hydro", 5);                // this rank's leaves, the code's arrays
//   for (const Leaf& l : my_leaves) {
//     shape.level = l.level;  shape.index = l.position;  // (level, position): the block's key
//     leaves.add(shape, korch::BlockArray::of(l.u, korch::IndexOrder::i_j_k_var));
//   }
//   korch::ForestBlocks mesh(leaves, {2, {4, 4, 1}, {true, true, false}, 3}, comm);
//   korch::ForestFillIterator fill(mesh, 0, 5);           // each leaf handed out with its guard cells
//   runtime.execute(bundle, configuration, leaves, &fill);
#pragma once

#include <korch/block_list.hpp>
#include <korch/communicator.hpp>
#include <korch/forest_guard_fill.hpp>
#include <korch/forest_leaves.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace korch {

namespace detail {
class ForestDeviceFill;
class ForestGhosts;
}  // namespace detail

class ForestBlocks : public ForestLeaves {
 public:
  // Collective over `comm`: gathers every rank's leaves (relist()). The list must outlive this
  // object. Throws korch::Error as relist() does.
  ForestBlocks(BlockList& blocks, const ForestShape& shape, const Communicator& comm = Communicator{});
  ~ForestBlocks() override;
  ForestBlocks(const ForestBlocks&) = delete;
  ForestBlocks& operator=(const ForestBlocks&) = delete;

  // Takes the list as it is now, after the code changed its leaves (collective). Throws
  // korch::Error, the same on every rank, naming the block or the rank: a block not a leaf, blocks
  // whose cells or guard cells differ (on any rank), wider guard cells than half a block on several
  // ranks, and what BlockForest::with_leaves refuses (keys outside the shape, listed twice, gaps,
  // leaves not 2:1 balanced).
  void relist();
  // Beyond non-periodic edges (ForestGuardFill::set_boundary); default outflow, which an empty
  // function restores. Collective, as for ForestMesh::set_boundary.
  void set_boundary(ForestGuardFill::BoundaryValue boundary);
  // Fills the guard cells of this rank's leaves, every variable (collective). On a list of device
  // arrays the fill runs on the device, with the default outflow boundary; with a custom boundary
  // it runs on korch's host copies, made valid first, and writes back to the arrays
  // (docs/adaptive-mesh.md, "Leaves in device memory").
  void fill_guard_cells();
  // The rank whose list holds a leaf of forest().leaves().
  int owner(int leaf_index) const { return owners_.at(static_cast<std::size_t>(leaf_index)); }

  const BlockForest& forest() const noexcept override { return *forest_; }
  const std::vector<BlockKey>& own_leaves() const noexcept override { return own_; }
  const DataSource& leaf_source() const noexcept override { return blocks_; }
  int own_block(const BlockKey& leaf) const override;
  std::uint64_t leaves_version() const noexcept override { return version_; }
  int n_vars() const noexcept override { return blocks_.n_vars(); }
  // Throws korch::Error when the list changed since relist() (any add or clear), as do both
  // fill_guard_cells. On a list of device arrays, when the iterator fills (FillBy::iterator) and the
  // boundary is the default, the cycle's fills run on the device arrays, which it first makes valid
  // (every variable); otherwise it makes korch's host copies of this rank's leaves valid, which the
  // fills of the cycle then read and write, and the cycle's end writes them back.
  void start_ghost_copies(FillBy fill_by = FillBy::action, int first_var = 0, int n_vars = -1) override;
  const std::vector<int>& leaves_without_ghosts() const noexcept override;
  std::vector<int> wait_for_ghosts() override;
  int ghost_messages_outstanding() const noexcept override;
  std::size_t ghost_values_sent() const noexcept override;
  void finish_ghost_copies() override;
  void abandon_ghost_copies() noexcept override;
  // On a list of device arrays it fills as the last start_ghost_copies() chose: on the device, or on
  // the host copies, throwing korch::Error when the block's host copy is not valid (no such start
  // in this cycle: fill inside a cycle over a ForestFillIterator).
  void fill_guard_cells(int block, int first_var = 0, int n_vars = -1) const override;

 private:
  // The array the fill and the copies to other ranks use for block b: the code's, or on a list of
  // device arrays korch's host copy of it (the same extents and strides).
  BlockArray host_array(int b) const;
  // On a list of device arrays: every variable of every block valid on the host alone, or on the
  // device alone.
  void claim_copies(bool on_device);
  // The fill on the device of a list of device arrays; nullptr when the host fills (a list in host
  // memory, a custom boundary, guard cells no device plan expresses). Made at the first use.
  detail::ForestDeviceFill* device_fill();
  void check_own_list(std::array<int, 3>& cells, std::array<int, 3>& guard) const;
  std::vector<std::uint64_t> agree_on_shape(std::array<int, 3>& cells, std::array<int, 3>& guard) const;
  void gather_leaves(const std::vector<std::uint64_t>& shapes, std::vector<BlockKey>& leaves,
                     std::vector<int>& rank_of) const;
  std::string list_change() const;
  void check_unchanged() const;
  std::size_t block_values() const;
  BlockArray ghost_array(const BlockKey& ghost);  // korch's copy of another rank's leaf (Grid's layout)

  BlockList& blocks_;
  ForestShape shape_;
  Communicator comm_;
  std::unique_ptr<BlockForest> forest_;
  std::unique_ptr<ForestGuardFill> fill_;
  std::unique_ptr<detail::ForestGhosts> ghosts_;
  std::unique_ptr<detail::ForestDeviceFill> device_fill_;
  bool device_fill_tried_ = false;  // device_fill() looked at this list and boundary
  bool fills_on_device_ = false;    // the last start_ghost_copies() chose the device
  ForestGuardFill::BoundaryValue boundary_;
  std::array<int, 3> cells_{1, 1, 1}, guard_{0, 0, 0};
  std::vector<BlockKey> own_;                                                   // block id order
  std::vector<const double*> own_data_;                                         // per block id: its array when listed
  std::vector<BlockArray> own_arrays_;                                          // per block id: host_array()
  std::unordered_map<BlockKey, int, BlockKeyHash> own_id_;                      // leaf -> block id
  std::vector<int> owners_;                                                     // per leaf index
  std::unordered_map<BlockKey, std::vector<double>, BlockKeyHash> ghost_data_;  // korch::Grid's layout
  std::uint64_t version_ = 0;
  std::uint64_t listed_stamp_ = 0;  // the list's layout_stamp() at the last relist()
};

}  // namespace korch
