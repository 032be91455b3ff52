#include <korch/error.hpp>
#include <korch/grid.hpp>

#include <algorithm>
#include <cmath>

namespace korch {

Grid::Grid(GridSpec spec) : spec_(spec) {
  static const char* axis[3] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d) {
    if (spec_.block_cells[d] < 1) {
      throw Error::format("grid: block_cells[{}] ({}) is {}: every block needs at least one interior cell per direction",
                          d, axis[d], spec_.block_cells[d]);
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

  const auto gw = guard_width();
  const auto ext = stored_extent();
  data_ = HostData("korch grid", static_cast<std::size_t>(spec_.blocks[0] * spec_.blocks[1] * spec_.blocks[2]),
                   static_cast<std::size_t>(spec_.n_vars), static_cast<std::size_t>(ext[0]),
                   static_cast<std::size_t>(ext[1]), static_cast<std::size_t>(ext[2]));
  doubles_per_block_ = static_cast<std::size_t>(spec_.n_vars) * static_cast<std::size_t>(ext[0]) *
                       static_cast<std::size_t>(ext[1]) * static_cast<std::size_t>(ext[2]);
  int id = 0;
  for (int bz = 0; bz < spec_.blocks[2]; ++bz)
    for (int by = 0; by < spec_.blocks[1]; ++by)
      for (int bx = 0; bx < spec_.blocks[0]; ++bx) {
        BlockMeta m;
        m.id = id++;
        m.level = spec_.level;
        m.index = {bx, by, bz};
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
  std::array<int, 3> t{};
  for (int d = 0; d < 3; ++d) t[d] = spec_.tile_cells[d] == 0 ? spec_.block_cells[d] : std::min(spec_.tile_cells[d], spec_.block_cells[d]);
  for (int k = 0; k < spec_.block_cells[2]; k += t[2])
    for (int j = 0; j < spec_.block_cells[1]; j += t[1])
      for (int i = 0; i < spec_.block_cells[0]; i += t[0]) {
        Box b;
        const int start[3] = {i, j, k};
        for (int d = 0; d < 3; ++d) {
          b.lo[d] = gw[d] + start[d];
          b.hi[d] = gw[d] + std::min(start[d] + t[d], spec_.block_cells[d]);
        }
        tile_boxes_.push_back(b);
      }
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
  return data_.data() + static_cast<std::size_t>(id) * doubles_per_block_;
}

Grid::BlockData Grid::block_data(int id) const {
  const auto ext = stored_extent();
  return BlockData(block_pointer(id), static_cast<std::size_t>(spec_.n_vars), static_cast<std::size_t>(ext[0]),
                   static_cast<std::size_t>(ext[1]), static_cast<std::size_t>(ext[2]));
}

double Grid::max_interior_difference(const Grid& other) const {
  if (other.n_blocks() != n_blocks() || other.n_vars() != n_vars() || other.stored_extent() != stored_extent()) {
    throw Error("grid: max_interior_difference needs two grids of the same spec");
  }
  double diff = 0.0;
  for (const auto& m : meta_)
    for (int v = 0; v < spec_.n_vars; ++v)
      for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
        for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
          for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k)
            diff = std::max(diff, std::abs(data_(m.id, v, i, j, k) - other.data_(m.id, v, i, j, k)));
  return diff;
}

Grid Grid::clone() const {
  Grid g(spec_);
  Kokkos::deep_copy(g.data_, data_);
  return g;
}

}  // namespace korch
