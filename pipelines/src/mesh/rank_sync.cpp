// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::RankSync, the work around every loop on ranks that the rank, direct and message-driven
// executors share (docs/mesh.md, "Ranks"). Halo refreshes travel point to point
// (halo_transport.cpp); partial reductions and gather() through the Communicator's all-gather, as
// bytes packed into 64-bit words.
#include <korch/error.hpp>
#include <korch/mesh/rank_sync.hpp>
#include "halo_transport.hpp"

#include <cstring>

namespace korch::mesh {

namespace {

std::size_t words_for(std::size_t bytes) { return (bytes + 7) / 8; }

// Every rank's bytes (the same length everywhere), in rank order.
std::vector<std::uint64_t> gather_bytes(const Communicator& comm, const void* bytes, std::size_t n) {
  std::vector<std::uint64_t> words(words_for(n), 0);
  if (n) std::memcpy(words.data(), bytes, n);
  return comm.all_gather(words);
}

// A loop modifying a dat through a map runs on the execute halo too.
bool modifies_through_map(const ParLoopBase& loop) {
  for (const ArgInfo& a : loop.args())
    if (a.indirect() && modifies(a.access)) return true;
  return false;
}

}  // namespace

const std::vector<int>& RankSync::elements(const ParLoopBase& loop) const {
  const SetPartition& p = partition_.of(loop.set());
  return modifies_through_map(loop) ? p.executed : p.owned;
}

RankLoop RankSync::begin(const ParLoopBase& loop) {
  const SetPartition& p = partition_.of(loop.set());
  const bool on_halo = modifies_through_map(loop);
  const bool ranks = partition_.size() > 1;
  for (const ArgInfo& a : loop.args()) {
    if (a.indirect()) partition_.of(a.map.to());  // a set the partition lacks is an error
    const bool reads = a.access == Access::Read || a.access == Access::RW;
    if (ranks && a.is_dat() && reads && (a.indirect() || on_halo)) refresh(*a.dat);
  }
  RankLoop share;
  if (!ranks) return share;
  share.whole_set = false;
  share.elements = &elements(loop);
  share.is_owned = &p.is_owned;
  // Modified globals: each rank reduces its owned elements from the value before the loop (INC:
  // from zero); end() combines the ranks' results in rank order.
  share.before.resize(loop.args().size());
  for (std::size_t i = 0; i < loop.args().size(); ++i) {
    const ArgInfo& a = loop.args()[i];
    if (a.is_dat() || !modifies(a.access)) continue;
    const char* value = static_cast<const char*>(a.global->bytes());
    share.before[i].assign(value, value + a.element_bytes);
    if (a.access == Access::Inc) a.zero(a.global->bytes());
  }
  return share;
}

void RankSync::end(const ParLoopBase& loop, const RankLoop& share) {
  if (share.whole_set) return;
  reduce_globals(loop, share.before);
  for (const ArgInfo& a : loop.args())
    if (a.is_dat() && modifies(a.access)) a.dat->set_halo_dirty(true);
}

void RankSync::reduce_globals(const ParLoopBase& loop, const std::vector<std::vector<char>>& before) {
  for (std::size_t i = 0; i < loop.args().size(); ++i) {
    const ArgInfo& a = loop.args()[i];
    if (a.is_dat() || !modifies(a.access)) continue;
    void* value = a.global->bytes();
    const std::vector<std::uint64_t> all = gather_bytes(partition_.communicator(), value, a.element_bytes);
    std::memcpy(value, before[i].data(), a.element_bytes);
    const std::size_t stride = words_for(a.element_bytes);
    for (int r = 0; r < partition_.size(); ++r)
      a.combine(value, all.data() + static_cast<std::size_t>(r) * stride, a.access);
  }
}

void RankSync::refresh(detail::DatCore& dat) {
  if (!dat.halo_dirty()) return;
  const SetPartition& p = partition_.of(dat.set());
  const std::size_t bytes = dat.element_bytes();
  char* data = static_cast<char*>(dat.host_bytes(true));
  std::vector<std::vector<char>> send(p.send_to.size()), receive(p.receive_from.size());
  for (std::size_t q = 0; q < send.size(); ++q) {
    send[q].resize(p.send_to[q].size() * bytes);
    for (std::size_t i = 0; i < p.send_to[q].size(); ++i)
      std::memcpy(send[q].data() + i * bytes, data + static_cast<std::size_t>(p.send_to[q][i]) * bytes, bytes);
    counts_.bytes_exported += static_cast<std::int64_t>(send[q].size());
  }
  for (std::size_t r = 0; r < receive.size(); ++r) receive[r].resize(p.receive_from[r].size() * bytes);
  detail::exchange_halo_bytes(partition_.communicator(), send, receive);
  for (std::size_t r = 0; r < receive.size(); ++r) {
    for (std::size_t i = 0; i < p.receive_from[r].size(); ++i)
      std::memcpy(data + static_cast<std::size_t>(p.receive_from[r][i]) * bytes, receive[r].data() + i * bytes, bytes);
    counts_.bytes_imported += static_cast<std::int64_t>(receive[r].size());
  }
  ++counts_.exchanges;
  dat.set_halo_dirty(false);
}

void RankSync::gather(detail::DatCore& dat) {
  const SetPartition& p = partition_.of(dat.set());
  std::vector<int> receive, position, counts(static_cast<std::size_t>(partition_.size()), 0);
  for (std::size_t e = 0; e < p.owner.size(); ++e) {
    const int at = counts[static_cast<std::size_t>(p.owner[e])]++;
    if (!p.is_owned[e]) {
      receive.push_back(static_cast<int>(e));
      position.push_back(at);
    }
  }
  gather_all(dat, p.owned, receive, position, counts);
  dat.set_halo_dirty(false);
}

// Packs this rank's `send` elements, gathers every rank's, and copies each `receive` element from
// its position in its owner's part (the parts' lengths are `counts` elements).
void RankSync::gather_all(detail::DatCore& dat, const std::vector<int>& send, const std::vector<int>& receive,
                          const std::vector<int>& receive_position, const std::vector<int>& counts) {
  const SetPartition& p = partition_.of(dat.set());
  const std::size_t bytes = dat.element_bytes();
  char* data = static_cast<char*>(dat.host_bytes(true));
  std::vector<std::uint64_t> words(words_for(send.size() * bytes), 0);
  char* out = reinterpret_cast<char*>(words.data());
  for (std::size_t i = 0; i < send.size(); ++i)
    std::memcpy(out + i * bytes, data + static_cast<std::size_t>(send[i]) * bytes, bytes);
  const std::vector<std::uint64_t> all = partition_.communicator().all_gather(words);
  std::vector<std::size_t> offset(counts.size() + 1, 0);  // in words
  for (std::size_t r = 0; r < counts.size(); ++r)
    offset[r + 1] = offset[r] + words_for(static_cast<std::size_t>(counts[r]) * bytes);
  if (offset.back() != all.size())
    throw Error::format(
        "mesh loops on ranks, gather: dat '{}': the ranks sent {} words, the partition expects {}: every "
        "rank must build the same mesh and Partition",
        dat.name(), all.size(), offset.back());
  const char* in = reinterpret_cast<const char*>(all.data());
  for (std::size_t i = 0; i < receive.size(); ++i) {
    const std::size_t owner = static_cast<std::size_t>(p.owner[static_cast<std::size_t>(receive[i])]);
    std::memcpy(data + static_cast<std::size_t>(receive[i]) * bytes,
                in + offset[owner] * 8 + static_cast<std::size_t>(receive_position[i]) * bytes, bytes);
  }
}

}  // namespace korch::mesh
