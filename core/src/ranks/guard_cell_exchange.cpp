#include <korch/config.hpp>
#include <korch/error.hpp>
#include <korch/guard_cell_exchange.hpp>

#include <algorithm>
#include <chrono>
#include <thread>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#if KORCH_HAVE_MPI
#include <mpi.h>
#endif

namespace korch {

struct GuardCellExchange::Requests {
#if KORCH_HAVE_MPI
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the world: the exchange's messages match only each other
  std::vector<MPI_Request> recv, send;
  std::vector<int> recv_peer;  // peers_ index of recv[i]
#endif
};

namespace {

#if KORCH_HAVE_MPI
void check_mpi(int rc, const char* call, int rank) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error::format("guard-cell exchange on rank {}: {} failed: {}", rank, call, std::string(text, static_cast<std::size_t>(length)));
}
#endif

}  // namespace

GuardCellExchange::GuardCellExchange(const Grid& grid, const Decomposition& decomposition,
                                     std::array<BoundaryKind, 3> boundary, Communicator comm)
    : grid_(grid), comm_(comm), requests_(std::make_unique<Requests>()) {
  const auto e = grid_.stored_extent();
  cells_per_var_ = static_cast<std::size_t>(e[0]) * static_cast<std::size_t>(e[1]) * static_cast<std::size_t>(e[2]);
  plan(decomposition, boundary);
#if KORCH_HAVE_MPI
  if (comm_.uses_mpi()) check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &requests_->comm), "MPI_Comm_dup", comm_.rank());
#endif
}

GuardCellExchange::~GuardCellExchange() {
  abandon();
#if KORCH_HAVE_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (requests_->comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&requests_->comm);
#endif
}

void GuardCellExchange::plan(const Decomposition& dec, std::array<BoundaryKind, 3> boundary) {
  const GridSpec& spec = grid_.spec();
  const int me = comm_.rank();
  if (dec.blocks() != spec.blocks)
    throw Error::format("guard-cell exchange: the decomposition has {}x{}x{} blocks, the grid {}x{}x{}: build both from "
                        "the same sizes",
                        dec.blocks()[0], dec.blocks()[1], dec.blocks()[2], spec.blocks[0], spec.blocks[1], spec.blocks[2]);
  if (dec.n_ranks() != comm_.size())
    throw Error::format("guard-cell exchange: the decomposition is for {} ranks, the communicator has {}", dec.n_ranks(),
                        comm_.size());
  const auto& mine = dec.blocks_of(me);
  bool same = static_cast<int>(mine.size()) == grid_.n_blocks();
  for (int b = 0; same && b < grid_.n_blocks(); ++b) same = grid_.block(b).global_id == mine[static_cast<std::size_t>(b)];
  if (!same)
    throw Error::format("guard-cell exchange: rank {}'s grid holds {} blocks, not the {} the decomposition gives it: set "
                        "GridSpec::owned_blocks to Decomposition::blocks_of(rank)",
                        me, grid_.n_blocks(), mine.size());
  const auto gw = grid_.guard_width();
  const auto ext = grid_.stored_extent();
  const auto nb = spec.block_cells;
  static const char* axis[3] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d)
    if (gw[static_cast<std::size_t>(d)] > nb[static_cast<std::size_t>(d)])
      throw Error::format("guard-cell exchange: blocks have {} cells in {} but {} guard cells: blocks need at least as "
                          "many interior cells as guard cells",
                          nb[static_cast<std::size_t>(d)], axis[d], gw[static_cast<std::size_t>(d)]);
  std::unordered_map<int, int> local_of;
  for (const auto& m : grid_.blocks()) local_of[m.global_id] = m.id;

  // Every guard cell of the block at `index`, in (i, j, k) order, with its source: the interior
  // cell of the whole grid at its own global position wrapped or clamped into the domain.
  auto each_guard_cell = [&](const std::array<int, 3>& index, auto&& visit) {
    for (int i = 0; i < ext[0]; ++i)
      for (int j = 0; j < ext[1]; ++j)
        for (int k = 0; k < ext[2]; ++k) {
          const int l[3] = {i, j, k};
          bool interior = true;
          std::array<int, 3> src_block{}, src{};
          for (int d = 0; d < 3; ++d) {
            const auto D = static_cast<std::size_t>(d);
            if (gw[D] == 0) {
              src_block[D] = index[D];
              src[D] = l[d];
              continue;
            }
            interior = interior && l[d] >= gw[D] && l[d] < gw[D] + nb[D];
            const int n = nb[D] * spec.blocks[D];
            int g = index[D] * nb[D] + l[d] - gw[D];
            if (boundary[D] == BoundaryKind::periodic) g = ((g % n) + n) % n;
            else g = std::clamp(g, 0, n - 1);
            src_block[D] = g / nb[D];
            src[D] = g % nb[D] + gw[D];
          }
          if (interior) continue;
          const int cell = (i * ext[1] + j) * ext[2] + k;
          visit(cell, dec.global_id(src_block), (src[0] * ext[1] + src[1]) * ext[2] + src[2]);
        }
  };

  std::map<int, Peer> peers;
  auto peer = [&](int rank) -> Peer& {
    auto& p = peers[rank];
    p.rank = rank;
    return p;
  };
  local_.assign(static_cast<std::size_t>(grid_.n_blocks()), {});
  remote_pending_.assign(static_cast<std::size_t>(grid_.n_blocks()), 0);
  std::vector<int> needs(static_cast<std::size_t>(grid_.n_blocks()), 0);
  for (const auto& m : grid_.blocks()) {
    std::set<int> from;
    each_guard_cell(m.index, [&](int cell, int src_global, int src_cell) {
      const int owner = dec.owner(src_global);
      if (owner == me) {
        local_[static_cast<std::size_t>(m.id)].push_back({m.id, cell, local_of.at(src_global), src_cell});
        return;
      }
      Peer& p = peer(owner);
      p.recv.push_back({m.id, cell, -1, -1});
      if (p.blocks.empty() || p.blocks.back() != m.id) p.blocks.push_back(m.id);
      from.insert(owner);
    });
    needs[static_cast<std::size_t>(m.id)] = static_cast<int>(from.size());
    counts_.local_copies += local_[static_cast<std::size_t>(m.id)].size();
  }
  // What the other ranks need from this one, in the order they list it: their blocks ascending,
  // each block's guard cells in (i, j, k) order. Only blocks next to one of ours can need our cells.
  std::set<int> near;
  for (const auto& m : grid_.blocks())
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz) {
          std::array<int, 3> q{m.index[0] + dx, m.index[1] + dy, m.index[2] + dz};
          bool inside = true;
          for (int d = 0; d < 3; ++d) {
            const auto D = static_cast<std::size_t>(d);
            if (q[D] >= 0 && q[D] < spec.blocks[D]) continue;
            if (boundary[D] == BoundaryKind::periodic && gw[D] > 0) q[D] = (q[D] + spec.blocks[D]) % spec.blocks[D];
            else inside = false;
          }
          if (inside) near.insert(dec.global_id(q));
        }
  for (const int g : near) {
    const int owner = dec.owner(g);
    if (owner == me) continue;
    Peer* p = nullptr;
    each_guard_cell(dec.index_of(g), [&](int, int src_global, int src_cell) {
      if (dec.owner(src_global) != me) return;
      if (!p) p = &peer(owner);
      p->send.push_back({-1, -1, local_of.at(src_global), src_cell});
    });
  }
  // `near` is ascending and each rank's blocks are ascending ids, so the sends to a rank follow
  // that rank's own order of its blocks, as its receive list does.
  for (auto& [rank, p] : peers) {
    p.recv_buffer.assign(p.recv.size() * static_cast<std::size_t>(spec.n_vars), 0.0);
    p.send_buffer.assign(p.send.size() * static_cast<std::size_t>(spec.n_vars), 0.0);
    counts_.cells_sent += p.send.size();
    peers_.push_back(std::move(p));
  }
  counts_.neighbour_ranks = static_cast<int>(peers_.size());
  for (int b = 0; b < grid_.n_blocks(); ++b) {
    if (needs[static_cast<std::size_t>(b)] == 0) local_only_.push_back(b);
    else ++counts_.blocks_needing_messages;
  }
  remote_pending_ = needs;
}

void GuardCellExchange::fill(int first, int count) {
  start(first, count);
  for (int b = 0; b < grid_.n_blocks(); ++b) fill_local(b);
  while (messages_outstanding() > 0) wait_some();
  finish();
}

void GuardCellExchange::start(int first, int count) {
  if (active_)
    throw Error::format("guard-cell exchange on rank {}: start() while a fill is in progress: call finish() (or "
                        "abandon()) first",
                        comm_.rank());
  if (first < 0 || count < 1 || first + count > grid_.n_vars())
    throw Error::format("guard-cell exchange: variables [{}, {}) are not in the grid's 0..{}", first, first + count,
                        grid_.n_vars() - 1);
  first_ = first;
  count_ = count;
  active_ = true;
  flight_begin_ns_ = trace_ ? trace_->now() : 0;
  std::fill(remote_pending_.begin(), remote_pending_.end(), 0);
  for (const auto& p : peers_)
    for (const int b : p.blocks) ++remote_pending_[static_cast<std::size_t>(b)];
  if (peers_.empty()) return;
#if KORCH_HAVE_MPI
  TraceScope scope(trace_, "pack+send", "communication", "communication", 0,
                   std::to_string(peers_.size()) + " messages");
  auto& r = *requests_;
  r.recv.clear();
  r.send.clear();
  r.recv_peer.clear();
  const std::size_t vars = static_cast<std::size_t>(count_);
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    auto& p = peers_[i];
    if (p.recv.empty()) continue;
    r.recv.emplace_back();
    r.recv_peer.push_back(static_cast<int>(i));
    ++outstanding_;
    check_mpi(MPI_Irecv(p.recv_buffer.data(), static_cast<int>(p.recv.size() * vars), MPI_DOUBLE, p.rank, 0, r.comm,
                        &r.recv.back()),
              "MPI_Irecv", comm_.rank());
  }
  const double* base = grid_.block_pointer(0);
  const std::size_t per_block = grid_.doubles_per_block();
  for (auto& p : peers_) {
    if (p.send.empty()) continue;
    const std::size_t n = p.send.size();
    for (std::size_t v = 0; v < vars; ++v) {
      const std::size_t var_offset = (static_cast<std::size_t>(first_) + v) * cells_per_var_;
      double* out = p.send_buffer.data() + v * n;
      for (std::size_t c = 0; c < n; ++c) {
        const Copy& s = p.send[c];
        out[c] = base[static_cast<std::size_t>(s.src_block) * per_block + var_offset + static_cast<std::size_t>(s.src_cell)];
      }
    }
    r.send.emplace_back();
    check_mpi(MPI_Isend(p.send_buffer.data(), static_cast<int>(n * vars), MPI_DOUBLE, p.rank, 0, r.comm, &r.send.back()),
              "MPI_Isend", comm_.rank());
  }
#else
  throw Error("guard-cell exchange: this build of korch has no MPI, yet the decomposition puts neighbours on other ranks");
#endif
}

void GuardCellExchange::fill_local(int block) {
  if (!active_) throw Error::format("guard-cell exchange on rank {}: fill_local({}) outside a fill: call start() first", comm_.rank(), block);
  (void)grid_.block(block);  // range check
  double* base = grid_.block_pointer(0);
  const std::size_t per_block = grid_.doubles_per_block();
  const auto& copies = local_[static_cast<std::size_t>(block)];
  for (int v = 0; v < count_; ++v) {
    const std::size_t var_offset = static_cast<std::size_t>(first_ + v) * cells_per_var_;
    for (const Copy& c : copies)
      base[static_cast<std::size_t>(c.dst_block) * per_block + var_offset + static_cast<std::size_t>(c.dst_cell)] =
          base[static_cast<std::size_t>(c.src_block) * per_block + var_offset + static_cast<std::size_t>(c.src_cell)];
  }
}

std::vector<int> GuardCellExchange::wait_some() {
  std::vector<int> ready;
#if KORCH_HAVE_MPI
  auto& r = *requests_;
  if (!active_ || outstanding_ == 0) return ready;
  std::vector<int> done(r.recv.size());
  int n_done = 0;
  {
    // Polls with short sleeps instead of MPI_Waitsome, which spins in Open MPI: this thread must
    // not take a core from the team threads that compute meanwhile (docs/ranks.md).
    TraceScope scope(trace_, "wait", "communication", "communication", 0, "receives");
    auto pause = std::chrono::microseconds(5);
    for (;;) {
      check_mpi(MPI_Testsome(static_cast<int>(r.recv.size()), r.recv.data(), &n_done, done.data(), MPI_STATUSES_IGNORE),
                "MPI_Testsome", comm_.rank());
      if (n_done != 0) break;
      std::this_thread::sleep_for(pause);
      pause = std::min(2 * pause, std::chrono::microseconds(200));
    }
  }
  if (n_done == MPI_UNDEFINED) {
    outstanding_ = 0;
    return ready;
  }
  outstanding_ -= n_done;
  if (outstanding_ == 0 && trace_) {
    // From the first receive posted to the last message unpacked: the time the teams should hide.
    TraceEvent e;
    e.name = "messages in flight";
    e.category = "communication";
    e.team = "communication";
    e.item = std::to_string(r.recv.size()) + " messages";
    e.begin_ns = flight_begin_ns_;
    e.end_ns = trace_->now();
    trace_->record(std::move(e));
  }
  TraceScope scope(trace_, "unpack", "communication", "communication", 0,
                   std::to_string(n_done) + " messages");
  double* base = grid_.block_pointer(0);
  const std::size_t per_block = grid_.doubles_per_block();
  for (int i = 0; i < n_done; ++i) {
    Peer& p = peers_[static_cast<std::size_t>(r.recv_peer[static_cast<std::size_t>(done[static_cast<std::size_t>(i)])])];
    const std::size_t n = p.recv.size();
    for (int v = 0; v < count_; ++v) {
      const std::size_t var_offset = static_cast<std::size_t>(first_ + v) * cells_per_var_;
      const double* in = p.recv_buffer.data() + static_cast<std::size_t>(v) * n;
      for (std::size_t c = 0; c < n; ++c) {
        const Copy& d = p.recv[c];
        base[static_cast<std::size_t>(d.dst_block) * per_block + var_offset + static_cast<std::size_t>(d.dst_cell)] = in[c];
      }
    }
    for (const int b : p.blocks)
      if (--remote_pending_[static_cast<std::size_t>(b)] == 0) ready.push_back(b);
  }
  // Completed requests are MPI_REQUEST_NULL now; Waitsome skips them, and returns MPI_UNDEFINED once
  // all are done.
  std::sort(ready.begin(), ready.end());
#endif
  return ready;
}

void GuardCellExchange::finish() {
  if (!active_) return;
#if KORCH_HAVE_MPI
  auto& r = *requests_;
  if (!r.send.empty()) {
    TraceScope scope(trace_, "wait", "communication", "communication", 0, "sends");
    check_mpi(MPI_Waitall(static_cast<int>(r.send.size()), r.send.data(), MPI_STATUSES_IGNORE), "MPI_Waitall", comm_.rank());
  }
  for (int pending : remote_pending_)
    if (pending != 0)
      throw Error::format("guard-cell exchange on rank {}: finish() before every message arrived: call wait_some() until "
                          "it returns nothing",
                          comm_.rank());
  r.send.clear();
  r.recv.clear();
#endif
  active_ = false;
}

void GuardCellExchange::abandon() noexcept {
  if (!active_) return;
#if KORCH_HAVE_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    auto& r = *requests_;
    for (auto& q : r.recv)
      if (q != MPI_REQUEST_NULL) {
        MPI_Cancel(&q);
        MPI_Request_free(&q);
      }
    for (auto& q : r.send)
      if (q != MPI_REQUEST_NULL) MPI_Request_free(&q);
    r.recv.clear();
    r.send.clear();
  }
#endif
  outstanding_ = 0;
  active_ = false;
}

}  // namespace korch
