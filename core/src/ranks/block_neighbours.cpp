// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/block_neighbours.hpp>
#include <korch/data_source.hpp>
#include <korch/error.hpp>

#include <fmt/format.h>

namespace korch {

NeighbourList::NeighbourList(int dims) : dims_(dims) {
  if (dims < 1 || dims > 3) throw Error::format("neighbour list: {} dimensions: use 1, 2 or 3", dims);
}

std::string NeighbourList::name(Direction d) {
  auto one = [](int c) { return c > 0 ? fmt::format("+{}", c) : fmt::format("{}", c); };
  return fmt::format("({}, {}, {})", one(d[0]), one(d[1]), one(d[2]));
}

void NeighbourList::check(Direction direction) const {
  bool zero = true;
  for (int d = 0; d < 3; ++d) {
    const int c = direction[static_cast<std::size_t>(d)];
    if (c < -1 || c > 1)
      throw Error::format("neighbour list: direction {} has a component {}: use -1, 0 or +1", name(direction), c);
    if (c != 0 && d >= dims_)
      throw Error::format(
          "neighbour list: direction {} points along axis {} of a {}-D list: build a NeighbourList({}) "
          "for {} directions",
          name(direction), "xyz"[d], dims_, d + 1, d + 1);
    zero = zero && c == 0;
  }
  if (zero) throw Error("neighbour list: direction (0, 0, 0) is the block itself: name a face, an edge or a corner");
}

void NeighbourList::set(int block, Direction direction, Neighbour neighbour) {
  check(direction);
  if (block < 0) throw Error::format("neighbour list: block {}: blocks are the data source's ids, 0 or more", block);
  if (neighbour.kind == Neighbour::Kind::block && (neighbour.global_id < 0 || neighbour.rank < 0))
    throw Error::format(
        "neighbour list: block {} in direction {}: neighbour id {} on rank {}: ids and ranks are 0 or more", block,
        name(direction), neighbour.global_id, neighbour.rank);
  if (block >= n_blocks()) entries_.resize(static_cast<std::size_t>(block) + 1);
  entries_[static_cast<std::size_t>(block)][static_cast<std::size_t>(slot(direction))] = neighbour;
}

Neighbour NeighbourList::get(int block, Direction direction) const {
  check(direction);
  if (block < 0 || block >= n_blocks()) return {};
  return entries_[static_cast<std::size_t>(block)][static_cast<std::size_t>(slot(direction))];
}

std::vector<Direction> NeighbourList::directions(int dims) {
  std::vector<Direction> out;
  const int hz = dims >= 3 ? 1 : 0, hy = dims >= 2 ? 1 : 0;
  for (int z = -hz; z <= hz; ++z)
    for (int y = -hy; y <= hy; ++y)
      for (int x = -1; x <= 1; ++x)
        if (x != 0 || y != 0 || z != 0) out.push_back({x, y, z});
  return out;
}

NeighbourList NeighbourList::uniform(const DataSource& source, int dims, std::array<int, 3> blocks,
                                     std::array<BoundaryKind, 3> boundary, const std::function<int(int)>& rank_of) {
  NeighbourList list(dims);
  for (int d = 0; d < 3; ++d)
    if (blocks[static_cast<std::size_t>(d)] < 1)
      throw Error::format("neighbour list: {} blocks along {}: use 1 or more", blocks[static_cast<std::size_t>(d)],
                          "xyz"[d]);
  for (int b = 0; b < source.n_blocks(); ++b) {
    const auto& index = source.block(b).index;
    for (const Direction& dir : directions(dims)) {
      std::array<int, 3> q{};
      bool outside = false;
      for (std::size_t d = 0; d < 3; ++d) {
        q[d] = index[d] + dir[d];
        if (q[d] >= 0 && q[d] < blocks[d]) continue;
        if (boundary[d] == BoundaryKind::periodic)
          q[d] = (q[d] + blocks[d]) % blocks[d];
        else
          outside = true;
      }
      if (outside) {
        list.set(b, dir, Neighbour::outflow());
        continue;
      }
      const int id = q[0] + blocks[0] * (q[1] + blocks[1] * q[2]);
      list.set(b, dir, Neighbour::block(id, rank_of(id)));
    }
  }
  if (list.n_blocks() < source.n_blocks()) list.entries_.resize(static_cast<std::size_t>(source.n_blocks()));
  return list;
}

}  // namespace korch
