// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "forest_ghosts.hpp"

#include "forest_ranks.hpp"
#include "../ranks/peer_messages.hpp"

#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

namespace korch::detail {

namespace {

// A box of groups (Box::group) steps 2 along the axes the leaf spans (those of the forest's dims,
// the first ones), 1 beyond; its cell c of a group lies bit a of c further along axis a, the order
// in which the fill's means add them (ForestGuardFill::term_of).
struct Groups {
  std::array<int, 3> step{1, 1, 1};
  std::array<std::ptrdiff_t, 8> offset{};  // of each cell of a group, from its first
  int size = 1;
  Groups(const BlockArray& a, const ForestGuardFill::Box& box) {
    if (box.group == 1) return;
    int axes = 0;
    for (int d = 0; d < 3; ++d)
      if (a.extent[d + 1] > 1) {
        step[d] = 2;
        ++axes;
      }
    size = 1 << axes;
    if (size != box.group || box.cells() % size != 0)
      throw Error(
          fmt::format("ghost box [{}, {}) x [{}, {}) x [{}, {}) of groups of {} cells does not fit a leaf "
                      "spanning {} axes (an internal error)",
                      box.lo[0], box.hi[0], box.lo[1], box.hi[1], box.lo[2], box.hi[2], box.group, axes));
    for (int c = 0; c < size; ++c)
      for (int d = 0; d < axes; ++d) offset[static_cast<std::size_t>(c)] += ((c >> d) & 1) * a.stride[d + 1];
  }
};

}  // namespace

// A box of groups travels as each group's sum, added from 0 in the means' order: the receiver's
// mean then adds the sum and -0.0s (x + -0.0 is x) and divides, the bits a mean of the cells gives.
void pack_box(const BlockArray& a, const ForestGuardFill::Box& box, int first_var, int n_vars, double* out) {
  const Groups g(a, box);
  for (std::ptrdiff_t v = first_var; v < first_var + n_vars; ++v)
    for (int i = box.lo[0]; i < box.hi[0]; i += g.step[0])
      for (int j = box.lo[1]; j < box.hi[1]; j += g.step[1])
        for (int k = box.lo[2]; k < box.hi[2]; k += g.step[2]) {
          const double* first = a.data + v * a.stride[0] + i * a.stride[1] + j * a.stride[2] + k * a.stride[3];
          if (g.size == 1) {
            *out++ = *first;
            continue;
          }
          double sum = 0.0;
          for (int c = 0; c < g.size; ++c) sum += first[g.offset[static_cast<std::size_t>(c)]];
          *out++ = sum;
        }
}

void unpack_box(const BlockArray& a, const ForestGuardFill::Box& box, int first_var, int n_vars, const double* in) {
  const Groups g(a, box);
  for (std::ptrdiff_t v = first_var; v < first_var + n_vars; ++v)
    for (int i = box.lo[0]; i < box.hi[0]; i += g.step[0])
      for (int j = box.lo[1]; j < box.hi[1]; j += g.step[1])
        for (int k = box.lo[2]; k < box.hi[2]; k += g.step[2]) {
          double* first = a.data + v * a.stride[0] + i * a.stride[1] + j * a.stride[2] + k * a.stride[3];
          *first = *in++;
          for (int c = 1; c < g.size; ++c) first[g.offset[static_cast<std::size_t>(c)]] = -0.0;
        }
}

ForestGhosts::ForestGhosts(const Communicator& comm, std::string who) : comm_(comm), who_(std::move(who)) {}

ForestGhosts::~ForestGhosts() { abandon(); }

// The leaves within two neighbours of a leaf hold every cell its guard cells read (guard cells at
// most half a block wide; prolongation's slopes reach one coarse cell beyond a coarser neighbour).
// Being near is symmetric: the leaves this rank sends to a rank are those that read its leaves.
void ForestGhosts::plan(const BlockForest& forest, const std::vector<int>& owners, const std::vector<BlockKey>& own,
                        std::array<int, 3> stored, int n_vars) {
  // The buffers below are where messages in flight land.
  if (in_flight_)
    throw Error(
        fmt::format("{} on rank {}: the leaves changed while copies of other ranks' leaves were in flight: "
                    "finish_ghost_copies() before a regrid or a new list of leaves",
                    who_, comm_.rank()));
  const std::size_t ranks = static_cast<std::size_t>(comm_.size());
  whole_ = {Box{}, Box{{0, 0, 0}, stored}};
  n_vars_ = n_vars;
  first_carried_ = 0;
  n_carried_ = n_vars;
  sends_.assign(ranks, {});
  receives_.assign(ranks, {});
  waiters_.assign(ranks, {});
  ranks_read_.assign(own.size(), 0);
  without_.clear();
  if (!messages_ && ranks > 1) messages_ = std::make_unique<PeerMessages>(comm_, who_);
  std::vector<std::vector<int>> receive_index(ranks);
  std::unordered_set<BlockKey, BlockKeyHash> listed;
  for (int b = 0; b < static_cast<int>(own.size()) && ranks > 1; ++b) {
    const BlockKey& leaf = own[static_cast<std::size_t>(b)];
    std::vector<bool> to(ranks, false);
    for (const BlockKey& near : leaves_near(forest, leaf, 2)) {
      const int index = forest.leaf_index(near);
      const int r = owners[static_cast<std::size_t>(index)];
      if (r == comm_.rank()) continue;
      to[static_cast<std::size_t>(r)] = true;
      if (listed.insert(near).second) receive_index[static_cast<std::size_t>(r)].push_back(index);
    }
    for (std::size_t r = 0; r < ranks; ++r)
      if (to[r]) {
        sends_[r].push_back(leaf);
        waiters_[r].push_back(b);
        ++ranks_read_[static_cast<std::size_t>(b)];
      }
  }
  for (int b = 0; b < static_cast<int>(own.size()); ++b)
    if (ranks_read_[static_cast<std::size_t>(b)] == 0) without_.push_back(b);
  send_boxes_.assign(ranks, {});
  receive_boxes_.assign(ranks, {});
  for (std::size_t r = 0; r < ranks; ++r) {
    // Both sides order a message's leaves along the curve, whatever this rank's block order.
    std::sort(sends_[r].begin(), sends_[r].end(),
              [&](const BlockKey& a, const BlockKey& b) { return forest.leaf_index(a) < forest.leaf_index(b); });
    std::sort(receive_index[r].begin(), receive_index[r].end());
    for (int index : receive_index[r]) receives_[r].push_back(forest.leaves()[static_cast<std::size_t>(index)]);
    send_boxes_[r].assign(sends_[r].size(), whole_);
    receive_boxes_[r].assign(receives_[r].size(), whole_);
  }
  size_buffers();
}

// A leaf no fill of the receiving rank reads (near, but beyond every stencil) travels as empty boxes.
void ForestGhosts::limit(const ForestGuardFill& fill, const std::vector<BlockKey>& own) {
  if (comm_.size() == 1) return;
  const std::optional<ForestGuardFill::BoxesRead> reads = fill.cells_read(own);
  const std::size_t ranks = receives_.size();
  constexpr std::size_t kPerBox = 7, kPerLeaf = 2 * kPerBox;  // lo, hi and group of each box
  std::vector<std::vector<double>> asks(ranks);
  std::vector<std::size_t> sizes(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    for (std::size_t g = 0; g < receives_[r].size(); ++g) {
      LeafBoxes& boxes = receive_boxes_[r][g];
      boxes = whole_;
      if (reads) {
        const auto found = reads->find(receives_[r][g]);
        boxes = LeafBoxes{};
        if (found != reads->end()) boxes = {found->second.sums, found->second.cells};
      }
      for (const Box& box : boxes) {
        for (int a = 0; a < 3; ++a) asks[r].insert(asks[r].end(), {double(box.lo[a]), double(box.hi[a])});
        asks[r].push_back(double(box.group));
      }
    }
    sizes[r] = sends_[r].size() * kPerLeaf;
  }
  const auto told = swap_buffers(comm_, asks, sizes, 7304);
  for (std::size_t r = 0; r < ranks; ++r)
    for (std::size_t s = 0; s < sends_[r].size(); ++s)
      for (std::size_t n = 0; n < 2; ++n) {
        const double* ask = &told[r][s * kPerLeaf + n * kPerBox];
        Box& box = send_boxes_[r][s][n];
        for (int a = 0; a < 3; ++a) {
          box.lo[a] = static_cast<int>(ask[2 * a]);
          box.hi[a] = static_cast<int>(ask[2 * a + 1]);
        }
        box.group = static_cast<int>(ask[6]);
      }
  size_buffers();
}

// Buffers for every variable; a message carries those of its exchange (values per variable times them).
void ForestGhosts::size_buffers() {
  const auto values = [](const std::vector<LeafBoxes>& leaves) {
    std::size_t n = 0;
    for (const LeafBoxes& boxes : leaves)
      for (const Box& box : boxes) n += static_cast<std::size_t>(box.values());
    return n;
  };
  send_values_.assign(sends_.size(), 0);
  receive_values_.assign(receives_.size(), 0);
  send_buffers_.assign(sends_.size(), {});
  receive_buffers_.assign(receives_.size(), {});
  for (std::size_t r = 0; r < sends_.size(); ++r) {
    send_values_[r] = values(send_boxes_[r]);
    receive_values_[r] = values(receive_boxes_[r]);
    send_buffers_[r].resize(send_values_[r] * static_cast<std::size_t>(n_vars_));
    receive_buffers_[r].resize(receive_values_[r] * static_cast<std::size_t>(n_vars_));
  }
}

std::size_t ForestGhosts::values_sent() const noexcept {
  std::size_t n = 0;
  for (const std::size_t values : send_values_) n += values * static_cast<std::size_t>(n_carried_);
  return n;
}

void ForestGhosts::check_carried(int block, int first_var, int end_var) const {
  if (block < 0 || block >= static_cast<int>(ranks_read_.size()) || ranks_read_[static_cast<std::size_t>(block)] == 0)
    return;
  if (first_var < 0 || end_var > n_vars_ || first_var >= end_var) return;  // the fill names a bad range
  if (first_var >= first_carried_ && end_var <= first_carried_ + n_carried_) return;
  throw Error(
      fmt::format("{} on rank {}: block {}'s fill of variables {} .. {} reads other ranks' leaves, but their copies "
                  "hold variables {} .. {} only: start the copies (start_ghost_copies, ForestFillIterator) with "
                  "the variables the cycle's fills read",
                  who_, comm_.rank(), block, first_var, end_var - 1, first_carried_, first_carried_ + n_carried_ - 1));
}

int ForestGhosts::vars_counted(int first_var, int n_vars) const {
  if (n_vars < 0) n_vars = n_vars_ - first_var;
  if (first_var < 0 || n_vars < 1 || first_var + n_vars > n_vars_)
    throw Error(fmt::format("{} on rank {}: start_ghost_copies() of variables {} .. {}; give a range within 0 .. {}",
                            who_, comm_.rank(), first_var, first_var + n_vars - 1, n_vars_ - 1));
  return n_vars;
}

void ForestGhosts::start(const Pack& pack, int first_var, int n_vars) {
  n_vars = vars_counted(first_var, n_vars);
  if (in_flight_)
    throw Error(
        fmt::format("{} on rank {}: start_ghost_copies() while copies are in flight: call finish_ghost_copies() "
                    "(or abandon_ghost_copies()) first",
                    who_, comm_.rank()));
  pending_ = ranks_read_;
  in_flight_ = true;
  first_carried_ = first_var;
  n_carried_ = n_vars;
  // A pack that fails (a device error, say) drops the copies: the next start finds none in flight,
  // and the ranks waiting for this one's messages stop with an error naming it.
  try {
    for (std::size_t r = 0; r < receives_.size(); ++r)
      if (!receives_[r].empty())
        messages_->receive(static_cast<int>(r), receive_buffers_[r].data(),
                           receive_values_[r] * static_cast<std::size_t>(n_vars), static_cast<int>(r));
    for (std::size_t r = 0; r < sends_.size(); ++r) {
      if (sends_[r].empty()) continue;
      double* out = send_buffers_[r].data();
      for (std::size_t s = 0; s < sends_[r].size(); ++s)
        for (const Box& box : send_boxes_[r][s]) {
          if (box.empty()) continue;
          pack(sends_[r][s], box, first_var, n_vars, out);
          out += box.values() * n_vars;
        }
      messages_->send(static_cast<int>(r), send_buffers_[r].data(), send_values_[r] * static_cast<std::size_t>(n_vars));
    }
  } catch (...) {
    abandon();
    throw;
  }
}

int ForestGhosts::outstanding() const noexcept {
  return in_flight_ && messages_ ? messages_->receives_outstanding() : 0;
}

std::vector<int> ForestGhosts::wait(const Unpack& unpack) {
  if (!in_flight_)
    throw Error(
        fmt::format("{} on rank {}: wait_for_ghosts() without copies in flight: call "
                    "start_ghost_copies() first",
                    who_, comm_.rank()));
  std::vector<int> ready;
  if (!messages_) return ready;
  for (const int r : messages_->wait_some_receives()) {
    const auto& from = receives_[static_cast<std::size_t>(r)];
    const auto& boxes = receive_boxes_[static_cast<std::size_t>(r)];
    const double* in = receive_buffers_[static_cast<std::size_t>(r)].data();
    for (std::size_t g = 0; g < from.size(); ++g)
      for (const Box& box : boxes[g]) {
        if (box.empty()) continue;
        unpack(from[g], box, first_carried_, n_carried_, in);
        in += box.values() * n_carried_;
      }
    for (const int b : waiters_[static_cast<std::size_t>(r)])
      if (--pending_[static_cast<std::size_t>(b)] == 0) ready.push_back(b);
  }
  std::sort(ready.begin(), ready.end());
  return ready;
}

void ForestGhosts::finish() {
  if (!in_flight_) return;
  if (outstanding() > 0)
    throw Error(
        fmt::format("{} on rank {}: finish_ghost_copies() before every copy arrived: call wait_for_ghosts() "
                    "until ghost_messages_outstanding() is 0",
                    who_, comm_.rank()));
  if (messages_) messages_->wait_sends();
  in_flight_ = false;
}

void ForestGhosts::abandon() noexcept {
  if (!in_flight_) return;
  if (messages_) messages_->abandon();
  in_flight_ = false;
}

}  // namespace korch::detail
