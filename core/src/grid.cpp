// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/grid.hpp>
#include <korch/grid_residency.hpp>

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

namespace korch {

std::uint64_t physical_memory_bytes() noexcept {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

std::size_t check_grid_size(const GridSpec& spec, std::uint64_t memory_limit) {
  static const char* axis[3] = {"x", "y", "z"};
  // Every product below is of factors already checked against their limits, so none overflows
  // 64 bits; the results are compared with the limits before anything narrower uses them.
  const std::int64_t guard = spec.guard;
  std::int64_t blocks = 1;
  for (int d = 0; d < 3; ++d) {
    const std::int64_t cells = static_cast<std::int64_t>(spec.blocks[d]) * spec.block_cells[d];
    if (cells > Grid::max_cells_per_direction)
      throw Error::format(
          "grid: {} blocks of {} cells in {} make {} cells, more than the limit of {} cells per direction",
          spec.blocks[d], spec.block_cells[d], axis[d], cells, Grid::max_cells_per_direction);
    const std::int64_t stored = spec.block_cells[d] + (d < spec.guard_dims ? 2 * guard : 0);
    if (stored > Grid::max_cells_per_direction)
      throw Error::format("grid: a block stores {} cells in {} ({} + 2 x {} guard cells), more than the limit of {}",
                          stored, axis[d], spec.block_cells[d], guard, Grid::max_cells_per_direction);
    blocks *= spec.blocks[d];
    if (blocks > Grid::max_blocks)
      throw Error::format("grid: {} x {} x {} blocks exceed the limit of {} blocks (block ids are int)", spec.blocks[0],
                          spec.blocks[1], spec.blocks[2], Grid::max_blocks);
  }
  if (!spec.owned_blocks.empty()) {
    std::int64_t previous = -1;
    for (const int id : spec.owned_blocks) {
      if (id <= previous || id >= blocks)
        throw Error::format("grid: owned_blocks holds {} after {}: give ascending global block ids in 0..{}", id,
                            previous, blocks - 1);
      previous = id;
    }
    blocks = static_cast<std::int64_t>(spec.owned_blocks.size());
  }
  // Bytes in long double first: the exact product may not fit 64 bits, its estimate always does.
  long double stored[3];
  for (int d = 0; d < 3; ++d) stored[d] = spec.block_cells[d] + (d < spec.guard_dims ? 2 * guard : 0);
  long double values = spec.n_vars * stored[0] * stored[1] * stored[2];
  for (int a = 0; a < 3; ++a)  // face variables across each axis the blocks extend along
    if (stored[a] > 1) values += spec.n_face_vars * stored[0] * stored[1] * stored[2] / stored[a] * (stored[a] + 1);
  const long double estimate = static_cast<long double>(blocks) * values * sizeof(double);
  const std::uint64_t limit = memory_limit > 0 ? memory_limit : (std::uint64_t{1} << 62);
  if (estimate > static_cast<long double>(limit))
    throw Error::format(
        "grid: {} x {} x {} blocks of {} x {} x {} cells (+ guard cells) with {} variables ({} on faces) need "
        "{:.4g} bytes, more than the limit of {} bytes{}",
        spec.blocks[0], spec.blocks[1], spec.blocks[2], spec.block_cells[0], spec.block_cells[1], spec.block_cells[2],
        spec.n_vars, spec.n_face_vars, static_cast<double>(estimate), limit,
        memory_limit > 0 ? " (this machine's physical memory)" : "");
  return static_cast<std::size_t>(estimate);
}

Grid::Grid(GridSpec spec) : spec_(spec) {
  static const char* axis[3] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d) {
    if (spec_.block_cells[d] < 1) {
      throw Error::format(
          "grid: block_cells[{}] ({}) is {}: every block needs at least one interior cell per direction", d, axis[d],
          spec_.block_cells[d]);
    }
    if (spec_.blocks[d] < 1) {
      throw Error::format("grid: blocks[{}] ({}) is {}: the grid needs at least one block per direction", d, axis[d],
                          spec_.blocks[d]);
    }
    if (spec_.tile_cells[d] < 0) {
      throw Error::format("grid: tile_cells[{}] ({}) is {}: use a positive tile size or 0 for the whole block", d,
                          axis[d], spec_.tile_cells[d]);
    }
  }
  if (spec_.guard < 0) throw Error::format("grid: guard is {}: use 0 or more guard cells", spec_.guard);
  if (spec_.guard_dims < 1 || spec_.guard_dims > 3) {
    throw Error::format("grid: guard_dims is {}: use 1 (x), 2 (x, y) or 3 (x, y, z)", spec_.guard_dims);
  }
  if (spec_.n_vars < 1) throw Error::format("grid: n_vars is {}: the grid needs at least one variable", spec_.n_vars);
  if (spec_.n_face_vars < 0)
    throw Error::format("grid: n_face_vars is {}: use 0 (no face variables) or more", spec_.n_face_vars);

  const std::size_t bytes = check_grid_size(spec_, physical_memory_bytes());

  const auto gw = guard_width();
  const auto ext = stored_extent();
  const std::size_t all_blocks = static_cast<std::size_t>(spec_.blocks[0]) * static_cast<std::size_t>(spec_.blocks[1]) *
                                 static_cast<std::size_t>(spec_.blocks[2]);
  const std::size_t n_blocks = spec_.owned_blocks.empty() ? all_blocks : spec_.owned_blocks.size();
  try {
    data_ = HostData("korch grid", n_blocks, static_cast<std::size_t>(spec_.n_vars), static_cast<std::size_t>(ext[0]),
                     static_cast<std::size_t>(ext[1]), static_cast<std::size_t>(ext[2]));
  } catch (const std::exception& e) {
    throw Error::format("grid: cannot allocate {} bytes for {} blocks: {}", bytes, n_blocks, e.what());
  }
  allocate_faces(n_blocks, bytes);
  doubles_per_block_ = static_cast<std::size_t>(spec_.n_vars) * static_cast<std::size_t>(ext[0]) *
                       static_cast<std::size_t>(ext[1]) * static_cast<std::size_t>(ext[2]);
  for (std::size_t id = 0; id < n_blocks; ++id) {
    const int global = spec_.owned_blocks.empty() ? static_cast<int>(id) : spec_.owned_blocks[id];
    BlockMeta m;
    m.id = static_cast<int>(id);
    m.global_id = global;
    m.level = spec_.level;
    m.index = {global % spec_.blocks[0], (global / spec_.blocks[0]) % spec_.blocks[1],
               global / (spec_.blocks[0] * spec_.blocks[1])};
    for (int d = 0; d < 3; ++d) {
      m.delta[d] = (spec_.domain_hi[d] - spec_.domain_lo[d]) / (spec_.blocks[d] * spec_.block_cells[d]);
      m.lo_coord[d] = spec_.domain_lo[d] + m.index[d] * spec_.block_cells[d] * m.delta[d];
      m.interior.lo[d] = gw[d];
      m.interior.hi[d] = gw[d] + spec_.block_cells[d];
      m.stored.lo[d] = 0;
      m.stored.hi[d] = ext[d];
    }
    meta_.push_back(m);
  }
  Box interior;
  for (int d = 0; d < 3; ++d) {
    interior.lo[d] = gw[d];
    interior.hi[d] = gw[d] + spec_.block_cells[d];
  }
  tile_boxes_ = tile_interior(interior, spec_.tile_cells);
  if (spec_.resident) residency_ = std::make_shared<GridResidency>(data_);
}

void Grid::allocate_faces(std::size_t n_blocks, std::size_t bytes) {
  const auto ext = stored_extent();
  for (int a = 0; a < 3 && spec_.n_face_vars > 0; ++a) {
    if (ext[a] < 2) continue;  // no faces across an axis the blocks do not extend along
    std::array<std::size_t, 3> faces{};
    for (int d = 0; d < 3; ++d) faces[d] = static_cast<std::size_t>(ext[d] + (d == a ? 1 : 0));
    try {
      faces_[a] = HostData("korch grid faces", n_blocks, static_cast<std::size_t>(spec_.n_face_vars), faces[0],
                           faces[1], faces[2]);
    } catch (const std::exception& e) {
      throw Error::format("grid: cannot allocate {} bytes for {} blocks: {}", bytes, n_blocks, e.what());
    }
  }
}

BlockView Grid::face_view(int id, int axis) const {
  (void)block_with_faces(*this, id, axis);
  const HostData& f = faces_[axis];
  const std::size_t sk = f.stride(4), sj = f.stride(3), si = f.stride(2), sv = f.stride(1);
  return BlockView(&f(static_cast<std::size_t>(id), 0, 0, 0, 0),
                   Kokkos::LayoutStride(f.extent(1), sv, f.extent(2), si, f.extent(3), sj, f.extent(4), sk));
}

DeviceResidency* Grid::device_residency() const noexcept { return residency_.get(); }

TransferBytes Grid::residency_transfers() const { return residency_ ? residency_->transfers() : TransferBytes{}; }

Grid::HostData Grid::data() const {
  if (residency_) residency_->make_all_host_valid(true);
  return data_;
}

Grid::ReadOnlyHostData Grid::read_data() const {
  if (residency_) residency_->make_all_host_valid(false);
  return data_;
}

std::array<int, 3> Grid::guard_width() const noexcept {
  std::array<int, 3> g{};
  for (int d = 0; d < 3; ++d) g[static_cast<std::size_t>(d)] = d < spec_.guard_dims ? spec_.guard : 0;
  return g;
}

std::array<int, 3> Grid::stored_extent() const noexcept {
  const auto g = guard_width();
  return {spec_.block_cells[0] + 2 * g[0], spec_.block_cells[1] + 2 * g[1], spec_.block_cells[2] + 2 * g[2]};
}

const BlockMeta& Grid::block(int id) const {
  if (id < 0 || id >= n_blocks()) {
    throw Error::format("grid: block {} does not exist: the grid has blocks 0..{}", id, n_blocks() - 1);
  }
  return meta_[static_cast<std::size_t>(id)];
}

double* Grid::block_pointer(int id) const {
  (void)block(id);
  if (residency_) residency_->make_host_valid(id, true);
  return data_.data() + static_cast<std::size_t>(id) * doubles_per_block_;
}

Grid::BlockData Grid::block_data(int id) const {
  const auto ext = stored_extent();
  return BlockData(block_pointer(id), static_cast<std::size_t>(spec_.n_vars), static_cast<std::size_t>(ext[0]),
                   static_cast<std::size_t>(ext[1]), static_cast<std::size_t>(ext[2]));
}

const std::vector<Box>& Grid::tiles_of(int id) const {
  (void)block(id);
  return tile_boxes_;
}

BlockView Grid::block_view(int id) const {
  const auto ext = stored_extent();
  const auto n = [](int x) { return static_cast<std::size_t>(x); };
  const std::size_t sk = 1, sj = n(ext[2]), si = sj * n(ext[1]), sv = si * n(ext[0]);
  return BlockView(block_pointer(id),  // brings a resident block back
                   Kokkos::LayoutStride(n(spec_.n_vars), sv, n(ext[0]), si, n(ext[1]), sj, n(ext[2]), sk));
}

double Grid::max_interior_difference(const Grid& other) const {
  if (other.n_blocks() != n_blocks() || other.n_vars() != n_vars() || other.stored_extent() != stored_extent()) {
    throw Error("grid: max_interior_difference needs two grids of the same spec");
  }
  // Only reads: the device copies stay valid.
  if (residency_) residency_->make_all_host_valid(false);
  if (other.residency_) other.residency_->make_all_host_valid(false);
  double diff = 0.0;
  for (const auto& m : meta_)
    for (int v = 0; v < spec_.n_vars; ++v)
      for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
        for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
          for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k)
            diff = std::max(diff, std::abs(data_(m.id, v, i, j, k) - other.data_(m.id, v, i, j, k)));
  return diff;
}

const Grid& as_grid(const DataSource& source) {
  if (const auto* grid = source.grid_or_null()) return *grid;
  throw Error::format(
      "the {} is not a korch::Grid: use the item's source() and view() (any layout) instead of grid() "
      "and data()",
      source.source_name());
}

Grid& as_grid(DataSource& source) { return const_cast<Grid&>(as_grid(static_cast<const DataSource&>(source))); }

Grid Grid::clone() const {
  Grid g(spec_);
  if (residency_) residency_->make_all_host_valid(false);
  Kokkos::deep_copy(g.data_, data_);  // the copy's residency starts valid on the host alone
  for (std::size_t a = 0; a < 3; ++a)
    if (faces_[a].data() != nullptr) Kokkos::deep_copy(g.faces_[a], faces_[a]);
  return g;
}

}  // namespace korch
