// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "guard_cell_plan.hpp"
#include "device_messages.hpp"
#include "resident_guard_fill.hpp"
#include "peer_messages.hpp"

#include <korch/config.hpp>
#include <korch/error.hpp>
#include <korch/device_residency.hpp>
#include <korch/guard_cell_exchange.hpp>

#include <algorithm>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

namespace korch {

GuardCellExchange::GuardCellExchange(const Grid& grid, const Decomposition& decomposition,
                                     std::array<BoundaryKind, 3> boundary, Communicator comm)
    : source_(grid), comm_(comm), messages_(std::make_unique<detail::PeerMessages>(comm, "guard-cell exchange")) {
  adopt(detail::plan_grid(grid, decomposition, boundary, comm_.rank(), comm_.size()));
}

GuardCellExchange::GuardCellExchange(const DataSource& source, const NeighbourList& neighbours, Communicator comm,
                                     std::array<int, 3> width)
    : source_(source), comm_(comm), messages_(std::make_unique<detail::PeerMessages>(comm, "guard-cell exchange")) {
  adopt(detail::plan_neighbours(source, neighbours, comm_, width));
}

GuardCellExchange::~GuardCellExchange() { abandon(); }

void GuardCellExchange::adopt(detail::GuardCellPlan plan) {
  plan_ = std::make_unique<detail::GuardCellPlan>(std::move(plan));
  const int n = source_.n_blocks();
  layout_stamp_ = source_.layout_stamp();
  base_.resize(static_cast<std::size_t>(n));
  var_stride_.resize(static_cast<std::size_t>(n));
  for (int b = 0; b < n; ++b) {
    const BlockView v = source_.block_view(b);
    base_[static_cast<std::size_t>(b)] = v.data();
    var_stride_[static_cast<std::size_t>(b)] = static_cast<std::ptrdiff_t>(v.stride(0));
  }
  std::vector<int> needs(static_cast<std::size_t>(n), 0);
  const auto vars = static_cast<std::size_t>(source_.n_vars());
  for (auto& p : plan_->peers) {
    for (const int b : p.blocks) ++needs[static_cast<std::size_t>(b)];
    p.recv_buffer.assign(p.recv.size() * vars, 0.0);
    p.send_buffer.assign(p.send.size() * vars, 0.0);
    counts_.cells_sent += p.send.size();
  }
  for (const auto& copies : plan_->local) counts_.local_copies += copies.size();
  counts_.neighbour_ranks = static_cast<int>(plan_->peers.size());
  for (int b = 0; b < n; ++b) {
    if (needs[static_cast<std::size_t>(b)] == 0)
      local_only_.push_back(b);
    else
      ++counts_.blocks_needing_messages;
  }
  remote_pending_ = needs;
  readers_.assign(static_cast<std::size_t>(n), {});
  for (int b = 0; b < n; ++b)
    for (const auto& c : plan_->local[static_cast<std::size_t>(b)]) {
      auto& readers = readers_[static_cast<std::size_t>(c.src_block)];
      if (c.src_block != b && (readers.empty() || readers.back() != b)) readers.push_back(b);
    }
  copied_.assign(static_cast<std::size_t>(n), 0);
  // A resident grid is filled on both copies, unless the code's own boundary fill (a host routine)
  // has guard cells to fill.
  bool host_routines = false;
  for (const auto& directions : plan_->user) host_routines = host_routines || !directions.empty();
  if (DeviceResidency* residency = source_.device_residency(); residency && n > 0 && !host_routines)
    resident_ = std::make_unique<detail::ResidentGuardFill>(*plan_, *residency, base_, var_stride_);
  if (resident_) set_device_messages(detail::device_messages_from_environment());
  source_.release_host_copies();  // planning looked at the blocks through the host
}

void GuardCellExchange::set_device_messages(DeviceMessages mode) {
  if (active_)
    throw Error::format("guard-cell exchange on rank {}: set_device_messages during a fill: call it between fills",
                        comm_.rank());
  direct_device_messages_ = detail::direct_device_messages(mode);
  if (resident_) resident_->set_direct_messages(direct_device_messages_);
}

TransferBytes GuardCellExchange::device_transfers() const noexcept {
  return resident_ ? resident_->moved() : TransferBytes{};
}

void GuardCellExchange::fill(int first, int count) {
  start(first, count);
  // A block whose fill fails (the code's boundary fill threw) stops the filling, not the messages:
  // every message of this fill is received before the error leaves, so none is left to be taken
  // for the next fill's.
  std::exception_ptr failure;
  const auto fill_block = [&](int b) {
    if (failure) return;
    try {
      fill_local(b);
    } catch (...) {
      failure = std::current_exception();
    }
  };
  try {
    // Blocks that need messages after their messages: a boundary fill may read any guard cell.
    for (const int b : local_only_) fill_block(b);
    while (messages_outstanding() > 0)
      for (const int b : wait_some()) fill_block(b);
    finish();
  } catch (...) {
    abandon();
    source_.release_host_copies();
    throw;
  }
  source_.release_host_copies();  // a code's device arrays get their filled guard cells
  if (failure) std::rethrow_exception(failure);
}

void GuardCellExchange::start(int first, int count) {
  if (active_)
    throw Error::format(
        "guard-cell exchange on rank {}: start() while a fill is in progress: call finish() (or "
        "abandon()) first",
        comm_.rank());
  if (first < 0 || count < 1 || first + count > source_.n_vars())
    throw Error::format("guard-cell exchange: variables [{}, {}) are not in the {}'s 0..{}", first, first + count,
                        source_.source_name(), source_.n_vars() - 1);
  if (source_.layout_stamp() != layout_stamp_ || source_.n_blocks() != static_cast<int>(base_.size()))
    throw Error::format(
        "guard-cell exchange on rank {}: the blocks of {} changed since the exchange was made: make a new "
        "exchange after changing the blocks",
        comm_.rank(), source_.source_name());
  if (!boundary_fill_)
    for (std::size_t b = 0; b < plan_->user.size(); ++b)
      if (!plan_->user[b].empty())
        throw Error::format(
            "guard-cell exchange on rank {}: block {} of {} has guard cells marked Neighbour::user() in "
            "direction {} but no boundary fill is set: call set_boundary_fill first",
            comm_.rank(), b, source_.source_name(), NeighbourList::name(plan_->user[b].front()));
  first_ = first;
  count_ = count;
  // A resident grid fills each block on the side that holds it (docs/residency.md); otherwise the
  // exchange reads and writes through the host pointers it keeps.
  if (resident_)
    resident_->start(first, count);
  else
    for (int b = 0; b < source_.n_blocks(); ++b) (void)source_.block_view(b);
  active_ = true;
  flight_begin_ns_ = trace_ ? trace_->now() : 0;
  std::fill(remote_pending_.begin(), remote_pending_.end(), 0);
  std::fill(copied_.begin(), copied_.end(), 0);
  auto& peers = plan_->peers;
  for (const auto& p : peers)
    for (const int b : p.blocks) ++remote_pending_[static_cast<std::size_t>(b)];
  if (peers.empty()) return;
#if KORCH_HAVE_MPI
  TraceScope scope(trace_, "pack+send", "communication", "communication", 0,
                   std::to_string(peers.size()) + " messages");
  const std::size_t vars = static_cast<std::size_t>(count_);
  for (std::size_t i = 0; i < peers.size(); ++i) {
    auto& p = peers[i];
    if (p.recv.empty()) continue;
    double* on_device = resident_ ? resident_->receive_buffer_on_device(i) : nullptr;
    messages_->receive(p.rank, on_device ? on_device : p.recv_buffer.data(), p.recv.size() * vars, static_cast<int>(i));
    ++outstanding_;
  }
  for (std::size_t i = 0; i < peers.size(); ++i) {
    auto& p = peers[i];
    if (p.send.empty()) continue;
    double* on_device = resident_ ? resident_->send_buffer_on_device(i) : nullptr;
    if (!on_device) pack_message(i);
    messages_->send(p.rank, on_device ? on_device : p.send_buffer.data(), p.send.size() * vars);
  }
#else
  throw Error(
      "guard-cell exchange: this build of korch has no MPI, yet the decomposition puts neighbours on other ranks");
#endif
}

void GuardCellExchange::fill_local(int block) {
  if (!active_)
    throw Error::format("guard-cell exchange on rank {}: fill_local({}) outside a fill: call start() first",
                        comm_.rank(), block);
  (void)source_.block(block);  // range check
  // start() filled a resident grid's device blocks, and the cells its host blocks take from them.
  if (resident_ && resident_->on_device(block)) return;
  copy_local(block);
  if (!plan_->user.empty())
    for (const Direction& d : plan_->user[static_cast<std::size_t>(block)]) boundary_fill_(block, d, first_, count_);
}

void GuardCellExchange::fill_readers_of(int block) {
  if (!active_)
    throw Error::format("guard-cell exchange on rank {}: fill_readers_of({}) outside a fill: call start() first",
                        comm_.rank(), block);
  (void)source_.block(block);  // range check
  for (const int reader : readers_[static_cast<std::size_t>(block)])
    if (!(resident_ && resident_->on_device(reader))) copy_local(reader);
}

void GuardCellExchange::copy_local(int block) {
  auto& copied = copied_[static_cast<std::size_t>(block)];
  if (copied) return;
  copied = 1;
  const auto& copies = plan_->local[static_cast<std::size_t>(block)];
  double* dst = base_[static_cast<std::size_t>(block)];
  const std::ptrdiff_t dst_stride = var_stride_[static_cast<std::size_t>(block)];
  for (int v = 0; v < count_; ++v) {
    const std::ptrdiff_t var = first_ + v;
    for (const auto& c : copies) {
      if (resident_ && resident_->on_device(c.src_block)) continue;
      const auto b = static_cast<std::size_t>(c.src_block);
      dst[var * dst_stride + c.dst] = base_[b][var * var_stride_[b] + c.src];
    }
  }
}

std::vector<int> GuardCellExchange::wait_some() {
  std::vector<int> ready;
  if (!active_ || outstanding_ == 0) return ready;
  std::vector<int> arrived;
  {
    TraceScope scope(trace_, "wait", "communication", "communication", 0, "receives");
    arrived = messages_->wait_some_receives();
  }
  outstanding_ = messages_->receives_outstanding();
  if (outstanding_ == 0 && trace_) {
    // From the first receive posted to the last message unpacked: the time the teams should hide.
    TraceEvent e;
    e.name = "messages in flight";
    e.category = "communication";
    e.team = "communication";
    const auto& peers = plan_->peers;
    e.item = std::to_string(std::count_if(peers.begin(), peers.end(), [](const auto& p) { return !p.recv.empty(); })) +
             " messages";
    e.begin_ns = flight_begin_ns_;
    e.end_ns = trace_->now();
    trace_->record(std::move(e));
  }
  TraceScope scope(trace_, "unpack", "communication", "communication", 0, std::to_string(arrived.size()) + " messages");
  for (const int peer : arrived) {
    unpack_message(static_cast<std::size_t>(peer));
    for (const int b : plan_->peers[static_cast<std::size_t>(peer)].blocks)
      if (--remote_pending_[static_cast<std::size_t>(b)] == 0) ready.push_back(b);
  }
  std::sort(ready.begin(), ready.end());
  return ready;
}

void GuardCellExchange::pack_message(std::size_t peer) {
  auto& p = plan_->peers[peer];
  const std::size_t n = p.send.size();
  for (int v = 0; v < count_; ++v) {
    const std::ptrdiff_t var = first_ + v;
    double* out = p.send_buffer.data() + static_cast<std::size_t>(v) * n;
    for (std::size_t c = 0; c < n; ++c) {
      const auto& s = p.send[c];
      const auto b = static_cast<std::size_t>(s.src_block);
      out[c] = base_[b][var * var_stride_[b] + s.src];
    }
  }
  if (resident_) resident_->pack(peer, p.send_buffer.data());  // the cells of device blocks
}

void GuardCellExchange::unpack_message(std::size_t peer) {
  if (resident_ && resident_->unpack_on_device(peer)) return;  // received into device memory
  const auto& p = plan_->peers[peer];
  const std::size_t n = p.recv.size();
  for (int v = 0; v < count_; ++v) {
    const std::ptrdiff_t var = first_ + v;
    const double* in = p.recv_buffer.data() + static_cast<std::size_t>(v) * n;
    for (std::size_t c = 0; c < n; ++c) {
      const auto& d = p.recv[c];
      const auto b = static_cast<std::size_t>(d.dst_block);
      base_[b][var * var_stride_[b] + d.dst] = in[c];
    }
  }
  if (resident_) resident_->unpack(peer, p.recv_buffer.data());  // the cells of device blocks
}

void GuardCellExchange::finish() {
  if (!active_) return;
  {
    TraceScope scope(trace_, "wait", "communication", "communication", 0, "sends");
    messages_->wait_sends();
  }
  for (int pending : remote_pending_)
    if (pending != 0)
      throw Error::format(
          "guard-cell exchange on rank {}: finish() before every message arrived: call wait_some() until "
          "it returns nothing",
          comm_.rank());
  active_ = false;
}

void GuardCellExchange::abandon() noexcept {
  if (!active_) return;
  messages_->abandon();
  outstanding_ = 0;
  active_ = false;
}

}  // namespace korch
