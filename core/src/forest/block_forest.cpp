// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/block_forest.hpp>
#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_set>

namespace korch {

std::string BlockKey::describe() const {
  return fmt::format("level {} ({}, {}, {})", level, position[0], position[1], position[2]);
}

std::size_t BlockKeyHash::operator()(const BlockKey& key) const noexcept {
  std::size_t h = std::hash<int>()(key.level);
  for (std::int64_t p : key.position) h = h * 1000003u ^ std::hash<std::int64_t>()(p);
  return h;
}

namespace {

// Bits needed for positions 0 .. n - 1.
int bits_for(std::int64_t n) {
  int bits = 0;
  while ((std::int64_t{1} << bits) < n) ++bits;
  return bits;
}

// Whether `child` (a child of the block next to a leaf in `direction`) touches that leaf: along an
// axis the direction leaves, only the children on the side that faces the leaf do.
bool faces_back(const BlockKey& child, const Direction& direction, int dims) {
  for (int a = 0; a < dims; ++a) {
    const std::int64_t side = child.position[a] & 1;
    if ((direction[a] == -1 && side != 1) || (direction[a] == +1 && side != 0)) return false;
  }
  return true;
}

}  // namespace

BlockForest::BlockForest(const ForestShape& shape) : shape_(shape) {
  if (shape.dims < 1 || shape.dims > 3) throw Error(fmt::format("BlockForest: dims = {}; give 1, 2 or 3", shape.dims));
  if (shape.max_level < 0)
    throw Error(fmt::format("BlockForest: max_level = {}; give 0 (no refinement) or more", shape.max_level));
  for (int a = 0; a < 3; ++a) {
    if (shape.roots[a] < 1 || (a >= shape.dims && shape.roots[a] != 1))
      throw Error(
          fmt::format("BlockForest: roots[{}] = {} in {}-D; give at least 1 root block along each of the "
                      "first {} axes and 1 beyond",
                      a, shape.roots[a], shape.dims, shape.dims));
    if (a < shape.dims) morton_bits_ = std::max(morton_bits_, bits_for(shape.roots[a]) + shape.max_level);
  }
  if (morton_bits_ * shape.dims > 63)
    throw Error(
        fmt::format("BlockForest: {} root blocks at most along an axis refined {} times need {} bits per "
                    "axis, more than the {} of a Morton key in {}-D; lower max_level",
                    *std::max_element(shape.roots.begin(), shape.roots.end()), shape.max_level, morton_bits_,
                    63 / shape.dims, shape.dims));
  BlockKey root;
  for (root.position[2] = 0; root.position[2] < shape.roots[2]; ++root.position[2])
    for (root.position[1] = 0; root.position[1] < shape.roots[1]; ++root.position[1])
      for (root.position[0] = 0; root.position[0] < shape.roots[0]; ++root.position[0]) blocks_[root] = true;
  order_leaves();
}

BlockForest BlockForest::with_leaves(const ForestShape& shape, const std::vector<BlockKey>& leaves) {
  BlockForest forest(shape);
  std::unordered_set<BlockKey, BlockKeyHash> listed, ancestors;
  for (const BlockKey& key : leaves) {
    bool inside = key.level >= 0 && key.level <= shape.max_level;
    for (int a = 0; a < 3 && inside; ++a)
      inside = key.position[a] >= 0 && key.position[a] < (inside ? forest.extent(key.level, a) : 0);
    if (!inside)
      throw Error(
          fmt::format("BlockForest: the listed leaf {} lies outside the forest of {} x {} x {} root blocks and "
                      "levels 0..{}; give each block its level and its position among that level's blocks",
                      key.describe(), shape.roots[0], shape.roots[1], shape.roots[2], shape.max_level));
    if (!listed.insert(key).second)
      throw Error(fmt::format("BlockForest: the leaf {} is listed twice; list each block once", key.describe()));
    for (BlockKey up = key; up.level > 0;) {
      up = forest.parent(up);
      ancestors.insert(up);
    }
  }
  for (int level = 0; level < shape.max_level; ++level) {
    std::vector<BlockKey> split;
    for (const BlockKey& leaf : forest.leaves())
      if (leaf.level == level && ancestors.count(leaf) != 0) split.push_back(leaf);
    if (!split.empty()) forest.refine(split);
  }
  for (const BlockKey& key : leaves)
    if (ancestors.count(key) != 0)
      throw Error(
          fmt::format("BlockForest: the listed leaf {} contains other listed leaves; list only the leaves, "
                      "the blocks not split",
                      key.describe()));
  for (const BlockKey& leaf : forest.leaves())
    if (listed.count(leaf) == 0)
      throw Error(
          fmt::format("BlockForest: no listed leaf is {}: the leaves leave a gap there, or are not 2:1 balanced "
                      "(leaves that touch differ by at most one level); list the block, or refine its coarser "
                      "neighbours",
                      leaf.describe()));
  return forest;
}

std::int64_t BlockForest::extent(int level, int axis) const {
  return axis < shape_.dims ? std::int64_t{shape_.roots[axis]} << level : 1;
}

bool BlockForest::wrap(BlockKey& key) const {
  for (int a = 0; a < shape_.dims; ++a) {
    const std::int64_t n = extent(key.level, a);
    if (key.position[a] >= 0 && key.position[a] < n) continue;
    if (!shape_.periodic[a]) return false;
    key.position[a] = ((key.position[a] % n) + n) % n;
  }
  return true;
}

std::vector<int> BlockForest::leaves_per_level() const {
  std::vector<int> count;
  for (const BlockKey& leaf : leaves_) {
    if (static_cast<int>(count.size()) <= leaf.level) count.resize(leaf.level + 1, 0);
    ++count[leaf.level];
  }
  return count;
}

bool BlockForest::contains(const BlockKey& key) const { return blocks_.count(key) != 0; }

bool BlockForest::is_leaf(const BlockKey& key) const {
  const auto it = blocks_.find(key);
  return it != blocks_.end() && it->second;
}

int BlockForest::leaf_index(const BlockKey& key) const {
  const auto it = leaf_index_.find(key);
  if (it == leaf_index_.end())
    throw Error(fmt::format("BlockForest: {} is not a leaf of the forest ({} leaves); take keys from leaves()",
                            key.describe(), leaves_.size()));
  return it->second;
}

BlockKey BlockForest::parent(const BlockKey& key) const {
  if (key.level == 0) throw Error(fmt::format("BlockForest: {} is a root block and has no parent", key.describe()));
  BlockKey p{key.level - 1, key.position};
  for (int a = 0; a < shape_.dims; ++a) p.position[a] >>= 1;
  return p;
}

std::vector<BlockKey> BlockForest::children(const BlockKey& key) const {
  std::vector<BlockKey> kids;
  const int n = 1 << shape_.dims;
  for (int c = 0; c < n; ++c) {
    BlockKey child{key.level + 1, key.position};
    for (int a = 0; a < shape_.dims; ++a) child.position[a] = 2 * key.position[a] + ((c >> a) & 1);
    kids.push_back(child);
  }
  return kids;
}

std::uint64_t BlockForest::morton(const BlockKey& key) const {
  const int shift = shape_.max_level - key.level;
  std::uint64_t code = 0;
  for (int a = 0; a < shape_.dims; ++a) {
    const auto fine = static_cast<std::uint64_t>(key.position[a]) << shift;
    for (int b = 0; b < morton_bits_; ++b) code |= ((fine >> b) & 1u) << (b * shape_.dims + a);
  }
  return code;
}

void BlockForest::check_direction(const Direction& direction) const {
  bool zero = true;
  for (int a = 0; a < 3; ++a) {
    if (direction[a] < -1 || direction[a] > 1 || (a >= shape_.dims && direction[a] != 0))
      throw Error(
          fmt::format("BlockForest: direction {} in a {}-D forest; each component -1, 0 or +1, and 0 "
                      "beyond the forest's dims",
                      NeighbourList::name(direction), shape_.dims));
    zero = zero && direction[a] == 0;
  }
  if (zero) throw Error("BlockForest: direction (0, 0, 0) names the block itself; give a face, edge or corner");
}

std::vector<ForestNeighbour> BlockForest::neighbours(const BlockKey& leaf, const Direction& direction) const {
  leaf_index(leaf);
  check_direction(direction);
  BlockKey next = leaf;
  for (int a = 0; a < 3; ++a) next.position[a] += direction[a];
  if (!wrap(next)) return {ForestNeighbour{}};
  const auto it = blocks_.find(next);
  if (it != blocks_.end() && it->second) return {ForestNeighbour{ForestNeighbour::Kind::same, next}};
  std::vector<ForestNeighbour> found;
  if (it != blocks_.end()) {
    for (const BlockKey& child : children(next))
      if (faces_back(child, direction, shape_.dims)) found.push_back({ForestNeighbour::Kind::finer, child});
    return found;
  }
  const BlockKey coarse = parent(next);
  if (!is_leaf(coarse))
    throw Error(
        fmt::format("BlockForest: next to {} in direction {} lies no leaf of level {} or {}: the forest "
                    "is not 2:1 balanced (call check() after changing it)",
                    leaf.describe(), NeighbourList::name(direction), leaf.level, leaf.level - 1));
  return {ForestNeighbour{ForestNeighbour::Kind::coarser, coarse}};
}

void BlockForest::split(const BlockKey& key) {
  blocks_[key] = false;
  for (const BlockKey& child : children(key)) blocks_[child] = true;
}

void BlockForest::order_leaves() {
  ++generation_;
  leaves_.clear();
  for (const auto& [key, leaf] : blocks_)
    if (leaf) leaves_.push_back(key);
  std::sort(leaves_.begin(), leaves_.end(),
            [this](const BlockKey& a, const BlockKey& b) { return morton(a) < morton(b); });
  leaf_index_.clear();
  for (std::size_t i = 0; i < leaves_.size(); ++i) leaf_index_[leaves_[i]] = static_cast<int>(i);
}

int BlockForest::refine(const std::vector<BlockKey>& flagged) {
  for (const BlockKey& key : flagged) leaf_index(key);
  int splits = 0;
  // Splits `key` after every coarser leaf next to it, so that no leaf touches one two levels finer.
  std::function<void(const BlockKey&)> refine_balanced = [&](const BlockKey& key) {
    for (const Direction& d : NeighbourList::directions(shape_.dims)) {
      BlockKey next = key;
      for (int a = 0; a < 3; ++a) next.position[a] += d[a];
      if (wrap(next) && !contains(next)) refine_balanced(parent(next));
    }
    split(key);
    ++splits;
  };
  for (const BlockKey& key : flagged)
    if (key.level < shape_.max_level && is_leaf(key)) refine_balanced(key);
  if (splits > 0) order_leaves();
  return splits;
}

bool BlockForest::touches_grandchildren(const BlockKey& block) const {
  for (const Direction& d : NeighbourList::directions(shape_.dims)) {
    BlockKey next = block;
    for (int a = 0; a < 3; ++a) next.position[a] += d[a];
    if (!wrap(next) || is_leaf(next) || !contains(next)) continue;
    for (const BlockKey& child : children(next))
      if (faces_back(child, d, shape_.dims) && !is_leaf(child)) return true;
  }
  return false;
}

int BlockForest::derefine(const std::vector<BlockKey>& flagged) {
  std::unordered_set<BlockKey, BlockKeyHash> distinct;
  for (const BlockKey& key : flagged) {
    leaf_index(key);
    parent(key);  // a root cannot merge: an error naming it
    distinct.insert(key);
  }
  std::unordered_map<BlockKey, int, BlockKeyHash> flagged_children;
  for (const BlockKey& key : distinct) ++flagged_children[parent(key)];
  std::vector<BlockKey> families;
  for (const auto& [family, count] : flagged_children)
    if (count == (1 << shape_.dims)) families.push_back(family);
  // Finest families first: merging them may let a coarser family merge.
  std::sort(families.begin(), families.end(), [this](const BlockKey& a, const BlockKey& b) {
    return a.level != b.level ? a.level > b.level : morton(a) < morton(b);
  });
  int merged = 0;
  for (const BlockKey& family : families) {
    const auto kids = children(family);
    const bool all_leaves = std::all_of(kids.begin(), kids.end(), [this](const BlockKey& k) { return is_leaf(k); });
    if (!all_leaves || touches_grandchildren(family)) continue;
    for (const BlockKey& child : kids) blocks_.erase(child);
    blocks_[family] = true;
    ++merged;
  }
  if (merged > 0) order_leaves();
  return merged;
}

void BlockForest::check() const {
  const auto fail = [](const std::string& what) { throw Error("BlockForest::check: " + what); };
  // Fine-level cells per leaf, summed: equal to the domain's exactly when the leaves do not overlap.
  std::uint64_t covered = 0, domain = 1;
  std::size_t leaves = 0;
  for (int a = 0; a < shape_.dims; ++a) domain *= static_cast<std::uint64_t>(extent(shape_.max_level, a));
  for (const auto& [key, leaf] : blocks_) {
    if (key.level < 0 || key.level > shape_.max_level) fail(key.describe() + " lies beyond levels 0 .. max_level");
    BlockKey inside = key;
    if (!wrap(inside) || inside != key) fail(key.describe() + " lies outside the domain");
    if (key.level > 0 && (!contains(parent(key)) || is_leaf(parent(key))))
      fail(key.describe() + " has no split parent");
    if (!leaf) {
      for (const BlockKey& child : children(key))
        if (!contains(child)) fail(key.describe() + " is split but lacks its child " + child.describe());
      continue;
    }
    covered += std::uint64_t{1} << (shape_.dims * (shape_.max_level - key.level));
    for (const Direction& d : NeighbourList::directions(shape_.dims)) {
      BlockKey next = key;
      for (int a = 0; a < 3; ++a) next.position[a] += d[a];
      if (!wrap(next)) continue;
      if (!contains(next) && !is_leaf(parent(next)))
        fail(fmt::format("{} touches a leaf two or more levels coarser in direction {}", key.describe(),
                         NeighbourList::name(d)));
    }
    if (touches_grandchildren(key)) fail(key.describe() + " touches a leaf two or more levels finer");
    ++leaves;
  }
  if (leaves != leaves_.size())
    fail(fmt::format("leaves() holds {} keys of the forest's {} leaves", leaves_.size(), leaves));
  if (covered != domain)
    fail(fmt::format("the leaves cover {} finest-level cells of the domain's {}", covered, domain));
  for (std::size_t i = 0; i < leaves_.size(); ++i) {
    if (!is_leaf(leaves_[i]) || leaf_index_.at(leaves_[i]) != static_cast<int>(i))
      fail("leaves() and the forest disagree at " + leaves_[i].describe());
    if (i > 0 && morton(leaves_[i - 1]) >= morton(leaves_[i]))
      fail("leaves() is not in Morton order at " + leaves_[i].describe());
  }
}

}  // namespace korch
