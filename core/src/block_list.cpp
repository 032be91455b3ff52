// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/block_list.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>

namespace korch {

BlockList::BlockList(std::string name, int n_vars, int n_face_vars)
    : name_(std::move(name)), n_vars_(n_vars), n_face_vars_(n_face_vars) {
  if (n_vars < 1)
    throw Error::format("block list '{}': n_vars is {}: a block list needs at least one variable", excerpt(name_),
                        n_vars);
  if (n_face_vars < 0)
    throw Error::format("block list '{}': n_face_vars is {}: use 0 (no face variables) or more", excerpt(name_),
                        n_face_vars);
}

void BlockList::check_shape(const BlockShape& shape) const {
  static const char* axis[3] = {"x", "y", "z"};
  const int id = n_blocks();
  for (int d = 0; d < 3; ++d) {
    if (shape.cells[d] < 1)
      throw Error::format("{}: block {} has {} cells in {}: every block needs at least one interior cell per direction",
                          source_name(), id, shape.cells[d], axis[d]);
    if (shape.guard[d] < 0)
      throw Error::format("{}: block {} has {} guard cells in {}: use 0 or more", source_name(), id, shape.guard[d],
                          axis[d]);
    if (shape.tile_cells[d] < 0)
      throw Error::format("{}: block {} has tile_cells {} in {}: use a positive tile size or 0 for the whole block",
                          source_name(), id, shape.tile_cells[d], axis[d]);
  }
  check_sizes(shape);
}

// The shape's sizes against the limits, each product checked before it could overflow 64 bits.
void BlockList::check_sizes(const BlockShape& shape) const {
  static const char* axis[3] = {"x", "y", "z"};
  const int id = n_blocks();
  std::int64_t values = n_vars_;
  std::int64_t tiles = 1;
  for (int d = 0; d < 3; ++d) {
    const std::int64_t cells = shape.cells[d];
    const std::int64_t stored = cells + 2 * std::int64_t{shape.guard[d]};
    if (stored > max_stored_cells)
      throw Error::format(
          "{}: block {} stores {} cells in {} ({} + 2 x {} guard cells), more than the limit of {} "
          "cells per direction: split it into smaller blocks",
          source_name(), id, stored, axis[d], cells, shape.guard[d], max_stored_cells);
    if (values > max_values / stored)
      throw Error::format(
          "{}: block {} holds more than {} values ({} variables of {} x {} x {} cells with guard cells): "
          "split it into smaller blocks",
          source_name(), id, max_values, n_vars_, shape.cells[0] + 2 * std::int64_t{shape.guard[0]},
          shape.cells[1] + 2 * std::int64_t{shape.guard[1]}, shape.cells[2] + 2 * std::int64_t{shape.guard[2]});
    values *= stored;
    const std::int64_t tile = shape.tile_cells[d] <= 0 ? cells : std::min<std::int64_t>(shape.tile_cells[d], cells);
    tiles *= (cells + tile - 1) / tile;  // at most max_tiles times at most max_stored_cells: no overflow
    if (tiles > max_tiles)
      throw Error::format(
          "{}: block {} of {} x {} x {} cells in tiles of {} x {} x {} makes more than {} tiles: give "
          "larger tile_cells (0: the whole block in a direction)",
          source_name(), id, shape.cells[0], shape.cells[1], shape.cells[2], shape.tile_cells[0], shape.tile_cells[1],
          shape.tile_cells[2], max_tiles);
  }
}

namespace {

const char* const index_name[4] = {"var", "i", "j", "k"};

std::string quadruple(const std::array<std::ptrdiff_t, 4>& v) {
  return fmt::format("(var {}, i {}, j {}, k {})", v[0], v[1], v[2], v[3]);
}

}  // namespace

void BlockList::check_array(const BlockShape& shape, const BlockArray& array) const {
  const int id = n_blocks();
  if (!blocks_.empty() && array.device != blocks_.front().array.device)
    throw Error::format(
        "{}: block {} is an array in {} memory but the list's blocks are in {} memory: keep one list per memory "
        "(BlockArray::of for host arrays, BlockArray::on_device for device arrays)",
        source_name(), id, array.device ? "device" : "host", array.device ? "host" : "device");
  const std::array<std::ptrdiff_t, 4> needed{n_vars_, shape.cells[0] + 2 * shape.guard[0],
                                             shape.cells[1] + 2 * shape.guard[1], shape.cells[2] + 2 * shape.guard[2]};
  check_layout(fmt::format("block {}", id), array, needed,
               fmt::format("(cells {} x {} x {} with {} x {} x {} guard cells per side, {} variables): give "
                           "BlockShape the array's cells and guard cells, the list as many variables as the array "
                           "holds (or a Kokkos::subview of the variables it should see), and the View's index order",
                           shape.cells[0], shape.cells[1], shape.cells[2], shape.guard[0], shape.guard[1],
                           shape.guard[2], n_vars_));
}

void BlockList::check_faces(const BlockShape& shape, const FaceArrays& faces) const {
  static const char* axis_name[3] = {"x", "y", "z"};
  const int id = n_blocks();
  for (int a = 0; a < 3; ++a) {
    const BlockArray& face = faces[static_cast<std::size_t>(a)];
    const std::string what = fmt::format("block {}'s face array across {}", id, axis_name[a]);
    const bool extends = shape.cells[a] + 2 * shape.guard[a] > 1;
    if (!extends) {
      if (face.data != nullptr)
        throw Error::format(
            "{}: {} is given, but the block stores one cell along {}, so it has no faces across it: leave that "
            "face array empty",
            source_name(), what, axis_name[a]);
      continue;
    }
    if (face.device)
      throw Error::format(
          "{}: {} is in device memory: face arrays are host memory (BlockArray::of), the packets carry "
          "them to the device",
          source_name(), what);
    std::array<std::ptrdiff_t, 4> needed{n_face_vars_, shape.cells[0] + 2 * shape.guard[0],
                                         shape.cells[1] + 2 * shape.guard[1], shape.cells[2] + 2 * shape.guard[2]};
    needed[static_cast<std::size_t>(a) + 1] += 1;
    check_layout(what, face, needed,
                 fmt::format("({} face variables over one more face than the block stores cells along {}): give "
                             "the list as many face variables as the array holds and the View's index order",
                             n_face_vars_, axis_name[a]));
  }
}

// An array's address, extents and strides: within the limits, and no two values sharing memory.
void BlockList::check_layout(const std::string& what, const BlockArray& array,
                             const std::array<std::ptrdiff_t, 4>& needed, const std::string& fix) const {
  if (array.data == nullptr)
    throw Error::format("{}: {} has no data: give the address of its value (var 0, i 0, j 0, k 0)", source_name(),
                        what);
  if (array.extent == std::array<std::ptrdiff_t, 4>{0, 0, 0, 0})
    throw Error::format(
        "{}: {} gives no extents: make its BlockArray with BlockArray::of(view, order) or "
        "BlockArray::of(data, order, extents, strides), so that korch can check them against its shape",
        source_name(), what);
  if (array.extent != needed)
    throw Error::format("{}: {} has extents {} but its shape needs {} {}", source_name(), what, quadruple(array.extent),
                        quadruple(needed), fix);
  for (int r = 0; r < 4; ++r)
    if (array.stride[static_cast<std::size_t>(r)] < 1)
      throw Error::format("{}: {} has stride {} along {}: strides count doubles and are at least 1", source_name(),
                          what, array.stride[static_cast<std::size_t>(r)], index_name[r]);
  // The last value's offset, within max_values (the extents are within the shape's limits).
  std::int64_t last = 0;
  for (int r = 0; r < 4; ++r) {
    const auto ru = static_cast<std::size_t>(r);
    const std::int64_t steps = array.extent[ru] - 1;
    if (steps > 0 && array.stride[ru] > (max_values - last) / steps)
      throw Error::format(
          "{}: {} has strides {} for extents {}: its last value lies more than {} values past its first; give the "
          "array's strides in doubles",
          source_name(), what, quadruple(array.stride), quadruple(array.extent), max_values);
    last += steps * array.stride[ru];
  }
  // Strides under which two values share memory: in increasing stride order, each stride must step
  // over everything the smaller ones span (indices of extent 1 span nothing).
  std::array<int, 4> order{0, 1, 2, 3};
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return array.stride[static_cast<std::size_t>(a)] < array.stride[static_cast<std::size_t>(b)];
  });
  std::ptrdiff_t spanned = 1;
  int spanning = -1;
  for (int r : order) {
    const auto ru = static_cast<std::size_t>(r);
    if (array.extent[ru] < 2) continue;
    if (array.stride[ru] < spanned)
      throw Error::format(
          "{}: {} has strides {} for extents {}: its values along {} overlap those along {}; give the array's "
          "strides in doubles",
          source_name(), what, quadruple(array.stride), quadruple(array.extent), index_name[r], index_name[spanning]);
    spanned = array.stride[ru] * array.extent[ru];
    spanning = r;
  }
}

int BlockList::add(const BlockShape& shape, const BlockArray& array) {
  if (n_face_vars_ > 0)
    throw Error::format(
        "{}: block {} is added without faces, but the list has {} face variables: give its face arrays "
        "(add(shape, array, faces))",
        source_name(), n_blocks(), n_face_vars_);
  return add(shape, array, FaceArrays{});
}

int BlockList::add(const BlockShape& shape, const BlockArray& array, const FaceArrays& faces) {
  check_shape(shape);
  check_array(shape, array);
  if (n_face_vars_ == 0 && (faces[0].data || faces[1].data || faces[2].data))
    throw Error::format(
        "{}: block {} is given face arrays, but the list has no face variables: give the list its count "
        "(BlockList(name, n_vars, n_face_vars))",
        source_name(), n_blocks());
  if (n_face_vars_ > 0) check_faces(shape, faces);
  const int id = n_blocks();
  Entry e;
  e.meta.id = id;
  e.meta.global_id = shape.global_id < 0 ? id : shape.global_id;
  e.meta.level = shape.level;
  e.meta.index = shape.index;
  e.meta.lo_coord = shape.lo_coord;
  e.meta.delta = shape.delta;
  for (int d = 0; d < 3; ++d) {
    e.meta.interior.lo[d] = shape.guard[d];
    e.meta.interior.hi[d] = shape.guard[d] + shape.cells[d];
    e.meta.stored.lo[d] = 0;
    e.meta.stored.hi[d] = shape.cells[d] + 2 * shape.guard[d];
  }
  e.tiles = tile_interior(e.meta.interior, shape.tile_cells);
  e.array = array;
  e.faces = faces;
  e.leaf = shape.leaf;
  if (array.device) {
    if (!residency_) residency_ = std::make_unique<BlockListResidency>(source_name(), n_vars_);
    BlockListResidency::Array a;
    a.data = array.data;
    for (std::size_t r = 0; r < 4; ++r) {
      a.extent[r] = array.extent[r];
      a.stride[r] = array.stride[r];
    }
    residency_->add(a);
  }
  blocks_.push_back(std::move(e));
  new_layout();
  return id;
}

void BlockList::clear() {
  synchronize();
  blocks_.clear();
  residency_.reset();
  new_layout();
}

const BlockList::Entry& BlockList::entry(int id) const {
  if (id < 0 || id >= n_blocks())
    throw Error::format("{}: block {} does not exist: {}", source_name(), id,
                        n_blocks() == 0 ? std::string("the list has no blocks; add them first")
                                        : fmt::format("the list has blocks 0..{}", n_blocks() - 1));
  return blocks_[static_cast<std::size_t>(id)];
}

const BlockMeta& BlockList::block(int id) const { return entry(id).meta; }
const std::vector<Box>& BlockList::tiles_of(int id) const { return entry(id).tiles; }
bool BlockList::is_leaf(int id) const { return entry(id).leaf; }

BlockView BlockList::block_view(int id) const {
  const auto& e = entry(id);
  const auto n = [](int x) { return static_cast<std::size_t>(x); };
  const auto s = [&](int r) { return static_cast<std::size_t>(e.array.stride[static_cast<std::size_t>(r)]); };
  const auto& st = e.meta.stored;
  double* data = e.array.data;
  if (residency_) {
    data = residency_->host_block(id);
    residency_->make_host_valid(id, true);
  }
  return BlockView(data,
                   Kokkos::LayoutStride(n(n_vars_), s(0), n(st.hi[0]), s(1), n(st.hi[1]), s(2), n(st.hi[2]), s(3)));
}

BlockView BlockList::face_view(int id, int axis) const {
  const BlockMeta& m = block_with_faces(*this, id, axis);
  const BlockArray& a = entry(id).faces[static_cast<std::size_t>(axis)];
  const Box faces = face_box(m.stored, axis);
  const auto n = [](int x) { return static_cast<std::size_t>(x); };
  const auto s = [&](int r) { return static_cast<std::size_t>(a.stride[static_cast<std::size_t>(r)]); };
  return BlockView(a.data, Kokkos::LayoutStride(n(n_face_vars_), s(0), n(faces.hi[0]), s(1), n(faces.hi[1]), s(2),
                                                n(faces.hi[2]), s(3)));
}

void BlockList::synchronize() const {
  if (residency_) residency_->make_all_device_only();
}

std::vector<int> BlockList::levels() const {
  std::set<int> levels;
  for (const auto& e : blocks_) levels.insert(e.meta.level);
  return {levels.begin(), levels.end()};
}

}  // namespace korch
