// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "forest_device_fill.hpp"
#include "forest_ghosts.hpp"

#include <korch/block_list_residency.hpp>
#include <korch/error.hpp>
#include <korch/forest_blocks.hpp>

#include <fmt/format.h>

namespace korch {

ForestBlocks::ForestBlocks(BlockList& blocks, const ForestShape& shape, const Communicator& comm)
    : blocks_(blocks), shape_(shape), comm_(comm) {
  ghosts_ = std::make_unique<detail::ForestGhosts>(comm_, "ForestBlocks over " + blocks_.source_name());
  relist();
}

ForestBlocks::~ForestBlocks() { abandon_ghost_copies(); }

// What a rank can check of its own list; throws naming the first block that is not usable.
void ForestBlocks::check_own_list(std::array<int, 3>& cells, std::array<int, 3>& guard) const {
  for (int b = 0; b < blocks_.n_blocks(); ++b) {
    const BlockMeta& m = blocks_.block(b);
    const std::array<int, 3> c{m.interior.extent(0), m.interior.extent(1), m.interior.extent(2)};
    const std::array<int, 3> g = m.interior.lo;
    if (!blocks_.is_leaf(b))
      throw Error(
          fmt::format("ForestBlocks over {}: block {} is not a leaf (BlockShape::leaf false); list only "
                      "the leaves, the blocks the code computes on",
                      blocks_.source_name(), b));
    if (b == 0) {
      cells = c;
      guard = g;
    } else if (c != cells || g != guard) {
      throw Error(
          fmt::format("ForestBlocks over {}: block {} has {} x {} x {} cells and {} x {} x {} guard cells, "
                      "block 0 {} x {} x {} and {} x {} x {}; every block of an adaptive mesh has the "
                      "same cells and guard cells",
                      blocks_.source_name(), b, c[0], c[1], c[2], g[0], g[1], g[2], cells[0], cells[1], cells[2],
                      guard[0], guard[1], guard[2]));
    }
  }
}

// Every rank's block count, cells and guard cells (7 numbers per rank), checked to agree; every rank
// throws the same error or none: a rank that threw alone would leave the others waiting.
std::vector<std::uint64_t> ForestBlocks::agree_on_shape(std::array<int, 3>& cells, std::array<int, 3>& guard) const {
  std::string why;
  try {
    check_own_list(cells, guard);
  } catch (const Error& e) {
    why = e.what();
  }
  const std::vector<std::string> whys = comm_.all_gather(why);
  for (std::size_t r = 0; r < whys.size(); ++r)
    if (!whys[r].empty()) throw Error(comm_.size() > 1 ? fmt::format("rank {}: {}", r, whys[r]) : whys[r]);
  std::vector<std::uint64_t> mine{static_cast<std::uint64_t>(blocks_.n_blocks())};
  for (int a = 0; a < 3; ++a) mine.push_back(static_cast<std::uint64_t>(cells[a]));
  for (int a = 0; a < 3; ++a) mine.push_back(static_cast<std::uint64_t>(guard[a]));
  const std::vector<std::uint64_t> shapes = comm_.all_gather(mine);
  int first = -1;
  for (int r = 0; r < comm_.size(); ++r) {
    const std::uint64_t* s = &shapes[static_cast<std::size_t>(r) * 7];
    if (s[0] == 0) continue;
    const std::array<int, 3> c{int(s[1]), int(s[2]), int(s[3])}, g{int(s[4]), int(s[5]), int(s[6])};
    if (first < 0) {
      first = r;
      cells = c;
      guard = g;
    } else if (c != cells || g != guard) {
      throw Error(
          fmt::format("ForestBlocks over {}: rank {} lists blocks of {} x {} x {} cells and {} x {} x {} "
                      "guard cells, rank {} of {} x {} x {} and {} x {} x {}; give every rank's blocks "
                      "the same cells and guard cells",
                      blocks_.source_name(), r, c[0], c[1], c[2], g[0], g[1], g[2], first, cells[0], cells[1], cells[2],
                      guard[0], guard[1], guard[2]));
    }
  }
  if (first < 0)
    throw Error(fmt::format("ForestBlocks over {}: no rank lists a block; list the mesh's leaves first",
                            blocks_.source_name()));
  for (int a = 0; a < shape_.dims && comm_.size() > 1; ++a)
    if (2 * guard[a] > cells[a])
      throw Error(
          fmt::format("ForestBlocks over {}: {} guard cells along axis {} for blocks of {} cells on {} "
                      "ranks; on ranks give at most half a block of guard cells",
                      blocks_.source_name(), guard[a], a, cells[a], comm_.size()));
  return shapes;
}

// Every rank's keys in rank order, and the rank that listed each.
void ForestBlocks::gather_leaves(const std::vector<std::uint64_t>& shapes, std::vector<BlockKey>& leaves,
                                 std::vector<int>& rank_of) const {
  std::vector<std::uint64_t> keys;
  for (int b = 0; b < blocks_.n_blocks(); ++b) {
    const BlockMeta& m = blocks_.block(b);
    keys.push_back(static_cast<std::uint64_t>(m.level));
    for (int a = 0; a < 3; ++a) keys.push_back(static_cast<std::uint64_t>(static_cast<std::int64_t>(m.index[a])));
  }
  const std::vector<std::uint64_t> all = comm_.all_gather(keys);
  for (int r = 0, at = 0; r < comm_.size(); ++r)
    for (std::uint64_t n = 0; n < shapes[static_cast<std::size_t>(r) * 7]; ++n, at += 4) {
      BlockKey key;
      key.level = static_cast<int>(static_cast<std::int64_t>(all[static_cast<std::size_t>(at)]));
      for (int a = 0; a < 3; ++a)
        key.position[a] = static_cast<std::int64_t>(all[static_cast<std::size_t>(at + 1 + a)]);
      leaves.push_back(key);
      rank_of.push_back(r);
    }
}

void ForestBlocks::relist() {
  if (ghosts_->in_flight())
    throw Error(
        fmt::format("ForestBlocks over {}: relist() while copies of other ranks' leaves are in flight: "
                    "relist between cycles",
                    blocks_.source_name()));
  std::array<int, 3> cells{0, 0, 0}, guard{0, 0, 0};
  const std::vector<std::uint64_t> shapes = agree_on_shape(cells, guard);
  std::vector<BlockKey> leaves;
  std::vector<int> rank_of;
  gather_leaves(shapes, leaves, rank_of);
  auto forest = std::make_unique<BlockForest>(BlockForest::with_leaves(shape_, leaves));
  auto fill = std::make_unique<ForestGuardFill>(*forest, cells, guard, blocks_.n_vars());
  if (boundary_) fill->set_boundary(boundary_);

  // Nothing below throws for the code's input: the new lists replace the old ones.
  device_fill_.reset();  // it reads the old forest's arrays
  device_fill_tried_ = fills_on_device_ = false;
  forest_ = std::move(forest);
  fill_ = std::move(fill);
  cells_ = cells;
  guard_ = guard;
  owners_.assign(leaves.size(), 0);
  own_.clear();
  own_data_.clear();
  own_arrays_.clear();
  own_id_.clear();
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    owners_[static_cast<std::size_t>(forest_->leaf_index(leaves[i]))] = rank_of[i];
    if (rank_of[i] != comm_.rank()) continue;
    own_id_[leaves[i]] = static_cast<int>(own_.size());
    own_data_.push_back(blocks_.array(static_cast<int>(own_.size())).data);
    own_arrays_.push_back(host_array(static_cast<int>(own_.size())));
    fill_->set_block(leaves[i], own_arrays_.back());
    own_.push_back(leaves[i]);
  }
  ghosts_->plan(*forest_, owners_, own_,
                {cells_[0] + 2 * guard_[0], cells_[1] + 2 * guard_[1], cells_[2] + 2 * guard_[2]}, blocks_.n_vars());
  ghost_data_.clear();
  for (const auto& from : ghosts_->receives())
    for (const BlockKey& ghost : from) {
      ghost_data_[ghost].assign(block_values(), 0.0);
      fill_->set_block(ghost, ghost_array(ghost));
    }
  // The host fill's plans say what travels; the device fill's plans read the same cells.
  ghosts_->limit(*fill_, own_);
  listed_stamp_ = blocks_.layout_stamp();
  ++version_;
}

std::size_t ForestBlocks::block_values() const {
  std::size_t n = static_cast<std::size_t>(blocks_.n_vars());
  for (int a = 0; a < 3; ++a) n *= static_cast<std::size_t>(cells_[a] + 2 * guard_[a]);
  return n;
}

BlockArray ForestBlocks::ghost_array(const BlockKey& ghost) {
  const std::ptrdiff_t ni = cells_[0] + 2 * guard_[0], nj = cells_[1] + 2 * guard_[1], nk = cells_[2] + 2 * guard_[2];
  return BlockArray::of(ghost_data_.at(ghost).data(), IndexOrder::var_i_j_k, {blocks_.n_vars(), ni, nj, nk},
                        {ni * nj * nk, nj * nk, nk, 1});
}

// Why the list is not the one relist() took (blocks, keys, arrays); empty when it is.
std::string ForestBlocks::list_change() const {
  const int n = blocks_.n_blocks();
  if (n != static_cast<int>(own_.size()))
    return fmt::format("the list has {} blocks, {} at the last relist()", n, own_.size());
  for (int b = 0; b < n; ++b) {
    const BlockMeta& m = blocks_.block(b);
    const BlockKey& key = own_[static_cast<std::size_t>(b)];
    const bool same = m.level == key.level && m.index[0] == key.position[0] && m.index[1] == key.position[1] &&
                      m.index[2] == key.position[2] && blocks_.array(b).data == own_data_[static_cast<std::size_t>(b)];
    if (!same)
      return fmt::format("block {} was {} with its array at {} at the last relist(), now level {} ({}, {}, {}) at {}",
                         b, key.describe(), static_cast<const void*>(own_data_[static_cast<std::size_t>(b)]), m.level,
                         m.index[0], m.index[1], m.index[2], static_cast<const void*>(blocks_.array(b).data));
  }
  return {};
}

// Local: a rank whose list is empty skips its cycles (the runtime refuses an empty list), so a
// reduction here would leave the others waiting for it. The list's layout stamp changes with every
// add and clear, so the check costs nothing while the list stays; the blocks are compared only to
// name the first that changed.
void ForestBlocks::check_unchanged() const {
  if (blocks_.layout_stamp() == listed_stamp_) return;
  std::string why = list_change();
  if (why.empty()) why = "the list was cleared and listed again";
  throw Error(
      fmt::format("ForestBlocks over {}: {}; call relist() (on every rank) after the code lists its leaves anew",
                  blocks_.source_name(), why));
}

int ForestBlocks::own_block(const BlockKey& leaf) const {
  const auto found = own_id_.find(leaf);
  return found == own_id_.end() ? -1 : found->second;
}

void ForestBlocks::set_boundary(ForestGuardFill::BoundaryValue boundary) {
  boundary_ = std::move(boundary);
  fill_->set_boundary(boundary_);
  device_fill_.reset();
  device_fill_tried_ = fills_on_device_ = false;
  ghosts_->limit(*fill_, own_);
}

BlockArray ForestBlocks::host_array(int b) const {
  BlockArray a = blocks_.array(b);
  if (!blocks_.on_device()) return a;
  // The host copy keeps its address for the list's life (unused pages go back, the range stays).
  a.data = static_cast<BlockListResidency*>(blocks_.device_residency())->host_block(b);
  a.device = false;
  return a;
}

void ForestBlocks::claim_copies(bool on_device) {
  DeviceResidency* residency = blocks_.device_residency();
  if (residency == nullptr || own_.empty()) return;
  residency->claim(std::vector<unsigned char>(own_.size(), on_device ? 1 : 0), 0, blocks_.n_vars());
}

detail::ForestDeviceFill* ForestBlocks::device_fill() {
  if (!blocks_.on_device() || boundary_ || own_.empty()) return nullptr;
  if (!device_fill_tried_) {
    device_fill_tried_ = true;
    std::vector<BlockArray> arrays;
    for (int b = 0; b < static_cast<int>(own_.size()); ++b) arrays.push_back(blocks_.array(b));
    std::vector<BlockKey> ghosts;
    for (const auto& from : ghosts_->receives()) ghosts.insert(ghosts.end(), from.begin(), from.end());
    device_fill_ =
        std::make_unique<detail::ForestDeviceFill>(*forest_, cells_, guard_, blocks_.n_vars(), own_, arrays, ghosts);
    if (!device_fill_->complete()) device_fill_.reset();
  }
  return device_fill_.get();
}

void ForestBlocks::fill_guard_cells() {
  start_ghost_copies(FillBy::iterator);
  while (ghost_messages_outstanding() > 0) wait_for_ghosts();
  finish_ghost_copies();
  if (fills_on_device_) {
    device_fill_->fill(0, blocks_.n_vars());
    return;
  }
  fill_->fill(own_);
  if (blocks_.on_device()) blocks_.device_residency()->make_all_device_only();
}

void ForestBlocks::fill_guard_cells(int block, int first_var, int n_vars) const {
  check_unchanged();  // the fill reads other leaves' arrays: none may have gone since relist()
  if (block < 0 || block >= static_cast<int>(own_.size()))
    throw Error(fmt::format("ForestBlocks over {}: block {} of {} leaves; give an id of the list",
                            blocks_.source_name(), block, own_.size()));
  if (fills_on_device_) {
    const int end = n_vars < 0 ? blocks_.n_vars() : first_var + n_vars;
    if (first_var < 0 || end > blocks_.n_vars() || first_var >= end)
      throw Error(fmt::format("ForestBlocks over {}: variables {} .. {} of {}; give a range within 0 .. {}",
                              blocks_.source_name(), first_var, end - 1, blocks_.n_vars(), blocks_.n_vars() - 1));
    ghosts_->check_carried(block, first_var, end);
    device_fill_->fill_leaf(block, first_var, end);
    return;
  }
  if (blocks_.on_device() && first_var >= 0 && first_var < blocks_.n_vars() &&
      !blocks_.device_residency()->host_valid(block, first_var))
    throw Error(
        fmt::format("ForestBlocks over {}: block {}'s host copy is not valid: on a list of device arrays a leaf's fill "
                    "reads korch's host copies, which start_ghost_copies() makes valid; fill inside a cycle over a "
                    "ForestFillIterator, or call fill_guard_cells() between cycles",
                    blocks_.source_name(), block));
  ghosts_->check_carried(block, first_var, n_vars < 0 ? blocks_.n_vars() : first_var + n_vars);
  fill_->fill_leaf(own_[static_cast<std::size_t>(block)], first_var, n_vars);
}

void ForestBlocks::start_ghost_copies(FillBy fill_by, int first_var, int n_vars) {
  check_unchanged();
  ghosts_->vars_counted(first_var, n_vars);  // a bad range changes nothing below
  fills_on_device_ = fill_by == FillBy::iterator && device_fill() != nullptr;
  claim_copies(fills_on_device_);
  // Every copy travels in korch::Grid's layout (variable slowest, k fastest), whatever the code's own.
  using Box = ForestGuardFill::Box;
  if (fills_on_device_)
    ghosts_->start([this](const BlockKey& leaf, const Box& box, int first, int n,
                          double* out) { device_fill_->pack(own_id_.at(leaf), box, first, n, out); },
                   first_var, n_vars);
  else
    ghosts_->start(
        [this](const BlockKey& leaf, const Box& box, int first, int n, double* out) {
          detail::pack_box(own_arrays_.at(static_cast<std::size_t>(own_id_.at(leaf))), box, first, n, out);
        },
        first_var, n_vars);
}

const std::vector<int>& ForestBlocks::leaves_without_ghosts() const noexcept { return ghosts_->without_ghosts(); }

std::vector<int> ForestBlocks::wait_for_ghosts() {
  using Box = ForestGuardFill::Box;
  if (fills_on_device_)
    return ghosts_->wait([this](const BlockKey& ghost, const Box& box, int first, int n, const double* in) {
      device_fill_->unpack(ghost, box, first, n, in);
    });
  return ghosts_->wait([this](const BlockKey& ghost, const Box& box, int first, int n, const double* in) {
    detail::unpack_box(ghost_array(ghost), box, first, n, in);
  });
}

int ForestBlocks::ghost_messages_outstanding() const noexcept { return ghosts_->outstanding(); }

std::size_t ForestBlocks::ghost_values_sent() const noexcept { return ghosts_->values_sent(); }

void ForestBlocks::finish_ghost_copies() { ghosts_->finish(); }

void ForestBlocks::abandon_ghost_copies() noexcept {
  if (ghosts_) ghosts_->abandon();
}

}  // namespace korch
