// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/data_source.hpp>
#include <korch/error.hpp>

#include <algorithm>
#include <atomic>
#include <climits>
#include <set>

namespace korch {

namespace {
std::atomic<std::uint64_t> next_stamp{1};
std::uint64_t fresh_stamp() noexcept { return next_stamp.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

DataSource::DataSource() noexcept : stamp_(fresh_stamp()) {}
DataSource::DataSource(const DataSource&) noexcept : stamp_(fresh_stamp()) {}
DataSource& DataSource::operator=(const DataSource& other) noexcept {
  if (this != &other) new_layout();
  return *this;
}

bool DataSource::is_leaf(int) const { return true; }

BlockView DataSource::face_view(int id, int axis) const {
  (void)block_with_faces(*this, id, axis);  // throws: this source keeps no faces
  return {};
}

const BlockMeta& block_with_faces(const DataSource& source, int id, int axis) {
  static const char* axis_name[3] = {"x", "y", "z"};
  if (source.n_face_vars() < 1)
    throw Error::format(
        "the {} has no face variables: give the source face variables (GridSpec::n_face_vars, "
        "BlockList(name, n_vars, n_face_vars)) to read faces",
        source.source_name());
  if (axis < 0 || axis > 2)
    throw Error::format("the {}: faces across axis {} asked of block {}: use axis 0 (x), 1 (y) or 2 (z)",
                        source.source_name(), axis, id);
  const BlockMeta& m = source.block(id);
  if (!has_faces_across(m, axis))
    throw Error::format(
        "the {}: block {} has no faces across {}: it stores one cell along {} (no guard cells there); read the "
        "axes it extends along",
        source.source_name(), id, axis_name[axis], axis_name[axis]);
  return m;
}

void DataSource::new_layout() noexcept { stamp_ = fresh_stamp(); }

int narrowest_guard(const DataSource& source) {
  int narrowest = INT_MAX;
  for (int b = 0; b < source.n_blocks(); ++b) {
    const BlockMeta& m = source.block(b);
    for (int d = 0; d < 3; ++d)
      if (m.stored.extent(d) > 1)
        narrowest = std::min({narrowest, m.interior.lo[d] - m.stored.lo[d], m.stored.hi[d] - m.interior.hi[d]});
  }
  return narrowest == INT_MAX ? 0 : narrowest;
}

std::vector<int> levels_of(const DataSource& source) {
  std::set<int> levels;
  for (int b = 0; b < source.n_blocks(); ++b) levels.insert(source.block(b).level);
  return {levels.begin(), levels.end()};
}

double mean_tiles_per_block(const DataSource& source) {
  if (source.n_blocks() == 0) return 0.0;
  std::size_t tiles = 0;
  for (int b = 0; b < source.n_blocks(); ++b) tiles += source.tiles_of(b).size();
  return static_cast<double>(tiles) / source.n_blocks();
}

}  // namespace korch
