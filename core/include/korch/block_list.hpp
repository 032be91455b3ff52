// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// BlockList: a data source whose blocks a physics code lists one by one, each pointing at the
// code's own array in the code's own layout (docs/data-sources.md). Blocks may differ in size, in
// guard cells and in level; korch copies nothing and never frees the arrays, which must outlive
// every cycle that uses the list.
//
//   korch::BlockList mesh("heat", 1);                    // one variable
//   korch::BlockShape shape;  shape.cells = {32, 16, 1};  shape.guard = {1, 1, 0};
//   mesh.add(shape, korch::BlockArray::of(u, korch::IndexOrder::i_j_k_var));  // a Kokkos View
//   runtime.execute(bundle, configuration, mesh);
//
// Block-local indices count guard cells: a block with cells {nx, ny, nz} and guard {gx, gy, gz}
// stores [0, nx + 2gx) x [0, ny + 2gy) x [0, nz + 2gz) and its interior is [gx, gx + nx) x ...
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/block_list_residency.hpp>
#include <korch/data_source.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace korch {

// The order of a code's array indices: (var, i, j, k), as korch::Grid stores, or (i, j, k, var), as a
// Fortran code declares u(nx, ny, nz, nvar).
enum class IndexOrder { var_i_j_k, i_j_k_var };

// Where one block's cells live: the address of cell (var 0, i 0, j 0, k 0) (the low guard corner),
// how many cells the array holds along var, i, j and k, and the distance in doubles between
// neighbours along each. BlockList::add checks the extents against the block's shape, so a guard
// width or a variable count that does not match the array is an error, not a read past it.
struct BlockArray {
  double* data = nullptr;
  std::array<std::ptrdiff_t, 4> stride{0, 0, 0, 0};  // (var, i, j, k)
  std::array<std::ptrdiff_t, 4> extent{0, 0, 0, 0};  // (var, i, j, k); 0: not given (refused by add)

  bool device = false;  // the array is in device memory (on_device): the code's primary copy

  // A host-accessible rank-4 Kokkos View of any layout whose indices come in `order`.
  template <class View>
  static BlockArray of(const View& view, IndexOrder order) {
    static_assert(View::rank == 4, "BlockArray::of takes a rank-4 View: (var, i, j, k) or (i, j, k, var)");
    static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible,
                  "BlockArray::of takes a View that the host can read: give a device View to BlockArray::on_device");
    return from_view(view, order, false);
  }
  // A rank-4 View in korch's device memory space (korch::DeviceMemSpace: CudaSpace, HIPSpace; on a
  // host build, where it is host memory, the array is still treated as the device's), whose
  // indices come in `order`. The list's blocks then stay in this memory between cycles
  // (docs/residency.md, "A code's own device arrays").
  template <class View>
  static BlockArray on_device(const View& view, IndexOrder order) {
    static_assert(View::rank == 4, "BlockArray::on_device takes a rank-4 View: (var, i, j, k) or (i, j, k, var)");
    static_assert(std::is_same<typename View::memory_space, DeviceMemSpace>::value,
                  "BlockArray::on_device takes a View in korch::DeviceMemSpace");
    return from_view(view, order, true);
  }
  // A raw array: the address of its first cell, then its extents and its strides (in doubles, so
  // padding shows as a stride larger than the extents below it), both in `order`.
  static BlockArray of(double* data, IndexOrder order, const std::array<std::ptrdiff_t, 4>& extents,
                       const std::array<std::ptrdiff_t, 4>& strides) {
    BlockArray a;
    a.data = data;
    a.extent = in_var_i_j_k(extents, order);
    a.stride = in_var_i_j_k(strides, order);
    return a;
  }
  // The same for an array in device memory (cudaMalloc, hipMalloc, or korch::DeviceMemSpace).
  static BlockArray on_device(double* data, IndexOrder order, const std::array<std::ptrdiff_t, 4>& extents,
                              const std::array<std::ptrdiff_t, 4>& strides) {
    BlockArray a = of(data, order, extents, strides);
    a.device = true;
    return a;
  }

 private:
  template <class View>
  static BlockArray from_view(const View& view, IndexOrder order, bool device) {
    static_assert(std::is_same<typename View::non_const_value_type, double>::value,
                  "BlockArray takes a View of double");
    std::array<std::ptrdiff_t, 4> extents{}, strides{};
    for (int r = 0; r < 4; ++r) {
      extents[static_cast<std::size_t>(r)] = static_cast<std::ptrdiff_t>(view.extent(static_cast<unsigned>(r)));
      strides[static_cast<std::size_t>(r)] = static_cast<std::ptrdiff_t>(view.stride(static_cast<std::size_t>(r)));
    }
    BlockArray a = of(const_cast<double*>(view.data()), order, extents, strides);
    a.device = device;
    return a;
  }
  static std::array<std::ptrdiff_t, 4> in_var_i_j_k(const std::array<std::ptrdiff_t, 4>& v, IndexOrder order) {
    return order == IndexOrder::var_i_j_k ? v : std::array<std::ptrdiff_t, 4>{v[3], v[0], v[1], v[2]};
  }
};

// What a block is besides its data.
struct BlockShape {
  std::array<int, 3> cells{1, 1, 1};       // interior cells per direction
  std::array<int, 3> guard{0, 0, 0};       // guard cells per side per direction
  std::array<int, 3> tile_cells{0, 0, 0};  // tile size; 0 in a direction: the whole interior
  int level = 0;
  bool leaf = true;                   // false: a finer block covers this one
  std::array<int, 3> index{0, 0, 0};  // block coordinates at its level (metadata)
  std::array<double, 3> lo_coord{0, 0, 0};
  std::array<double, 3> delta{1, 1, 1};
  int global_id = -1;  // -1: the block's id in this list
};

class BlockList : public DataSource {
 public:
  // A block's face arrays, one per axis (x, y, z): across an axis the block extends along, the
  // array of n_face_vars variables over the faces of its stored cells (one more than the stored
  // cells along that axis; face i is the low face of cell i); across another axis none (no data).
  // Host memory, in any layout, also for a list of device arrays (docs/data-sources.md).
  using FaceArrays = std::array<BlockArray, 3>;

  // n_face_vars: face-centred variables per block (0: none). Throws korch::Error when n_vars < 1 or
  // n_face_vars < 0.
  BlockList(std::string name, int n_vars, int n_face_vars = 0);

  // Limits of a block, checked in 64 bits: cells stored per direction, guard cells included (box
  // coordinates are int, and tile loops add a tile's size to one); values of the array (n_vars times
  // its cells, and its last value's offset: byte offsets are ptrdiff_t); tiles per block (each is a
  // box kept for the list's life).
  static constexpr std::int64_t max_stored_cells = INT_MAX / 2;
  static constexpr std::int64_t max_values = PTRDIFF_MAX / static_cast<std::int64_t>(sizeof(double));
  static constexpr std::int64_t max_tiles = std::int64_t{1} << 24;

  // Appends a block and returns its id (0, 1, ...). Throws korch::Error naming the block and the
  // field when the shape or the array is not usable: no cells, negative guard, sizes beyond the
  // limits above, no data, no extents, extents other than (n_vars, cells + 2 guard) per direction,
  // strides below 1 or strides under which two cells share memory, a device array in a list of
  // host arrays or the other way round.
  int add(const BlockShape& shape, const BlockArray& array);
  // The same for a list with face variables: `faces` holds the block's face arrays (FaceArrays),
  // checked like its cells (extents n_face_vars and the faces' counts, strides, host memory); a
  // face array given across an axis the block does not extend along is an error too.
  int add(const BlockShape& shape, const BlockArray& array, const FaceArrays& faces);
  // The checks of add() on the shape alone, for the block that add() would append next.
  void check_shape(const BlockShape& shape) const;
  // Forgets every block (the arrays stay the code's).
  void clear();

  std::string source_name() const override { return "block list '" + excerpt(name_) + "'"; }
  int n_blocks() const noexcept override { return static_cast<int>(blocks_.size()); }
  int n_vars() const noexcept override { return n_vars_; }
  const BlockMeta& block(int id) const override;
  const std::vector<Box>& tiles_of(int id) const override;
  // A block of a list of device arrays is seen on the host through korch's host copy of it, made
  // valid first; the device array is marked stale, as the caller may write the copy, until the
  // cycle ends (or synchronize()).
  BlockView block_view(int id) const override;
  int n_face_vars() const noexcept override { return n_face_vars_; }
  // The code's own face array of the block across `axis` (no copy, also in a list of device arrays).
  BlockView face_view(int id, int axis) const override;
  bool is_leaf(int id) const override;
  // The code's array of a block, as add() took it. Throws korch::Error naming a bad id.
  const BlockArray& array(int id) const { return entry(id).array; }
  // Whether the blocks' arrays are in device memory (BlockArray::on_device).
  bool on_device() const noexcept { return residency_ != nullptr; }
  DeviceResidency* device_residency() const noexcept override { return residency_.get(); }
  // For a list of device arrays: writes what the host changed in korch's host copies back to the
  // code's arrays, after which only the arrays are valid. The runtime calls it at the end of every
  // cycle and guard-cell fill; call it after writing through block_view() between cycles.
  void synchronize() const;
  void release_host_copies() const override { synchronize(); }
  // The levels present, ascending.
  std::vector<int> levels() const;

 private:
  struct Entry {
    BlockMeta meta;
    std::vector<Box> tiles;
    BlockArray array;
    FaceArrays faces;
    bool leaf;
  };
  const Entry& entry(int id) const;
  void check_array(const BlockShape& shape, const BlockArray& array) const;
  void check_faces(const BlockShape& shape, const FaceArrays& faces) const;
  void check_layout(const std::string& what, const BlockArray& array, const std::array<std::ptrdiff_t, 4>& needed,
                    const std::string& fix) const;
  void check_sizes(const BlockShape& shape) const;
  std::string name_;
  int n_vars_;
  int n_face_vars_;
  std::vector<Entry> blocks_;
  std::unique_ptr<BlockListResidency> residency_;  // a list of device arrays
};

}  // namespace korch
