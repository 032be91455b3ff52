// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/backend/async_copy.hpp>
#include <korch/backend/strided_copy.hpp>
#include <korch/data_packet.hpp>
#include <korch/error.hpp>

#include "box_copy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace korch {

namespace {
std::atomic<std::uint64_t> next_packet_id{1};
constexpr std::size_t meta_doubles_per_entry = (sizeof(PacketEntryMeta) + sizeof(double) - 1) / sizeof(double);
}  // namespace

const char* DataPacket::to_string(State state) noexcept {
  switch (state) {
    case State::building: return "building";
    case State::packed: return "packed (on the host)";
    case State::on_device: return "on the device";
    case State::on_host: return "back on the host";
    case State::unpacked: return "unpacked";
    case State::released: return "released";
  }
  return "?";
}

DataPacket::DataPacket(const DataSource& grid, DataType type, PacketVariables variables, MemoryPool& pinned_pool,
                       MemoryPool& device_pool)
    : source_(&grid),
      type_(type),
      vars_(std::move(variables)),
      pinned_pool_(&pinned_pool),
      device_pool_(&device_pool),
      id_(next_packet_id.fetch_add(1, std::memory_order_relaxed)) {
  if (!is_packet(type)) {
    throw Error::format("data packet: type {} is not a packet type: use packet_of_blocks or packet_of_tiles",
                        korch::to_string(type));
  }
  if (pinned_pool.memory() != PoolMemory::pinned_host || device_pool.memory() != PoolMemory::device) {
    throw Error("data packet: give a pinned-host pool and then a device pool");
  }
  if (vars_.copy_in.empty() && vars_.copy_in_out.empty() && vars_.copy_out.empty()) {
    for (int v = 0; v < grid.n_vars(); ++v) vars_.copy_in_out.push_back(v);
    // Nothing named at all: the face variables travel both ways too.
    if (vars_.face_copy_in.empty() && vars_.face_copy_in_out.empty() && vars_.face_copy_out.empty())
      for (int v = 0; v < grid.n_face_vars(); ++v) vars_.face_copy_in_out.push_back(v);
  }
  if (vars_.scratch < 0) throw Error::format("data packet: scratch is {}: use 0 or more", vars_.scratch);
  section_of_.assign(static_cast<std::size_t>(grid.n_vars()), -1);
  slot_of_.assign(static_cast<std::size_t>(grid.n_vars()), -1);
  const std::vector<int>* lists[3] = {&vars_.copy_in, &vars_.copy_in_out, &vars_.copy_out};
  static const char* names[3] = {"copy_in", "copy_in_out", "copy_out"};
  for (int s = 0; s < 3; ++s) {
    for (int v : *lists[s]) {
      if (v < 0 || v >= grid.n_vars()) {
        throw Error::format("data packet: {} names variable {}, but the {} has variables 0..{}", names[s], v,
                            grid.source_name(), grid.n_vars() - 1);
      }
      auto& sec = section_of_[static_cast<std::size_t>(v)];
      if (sec != -1) {
        throw Error::format("data packet: variable {} is in {} and in {}: give each variable one direction", v,
                            names[sec], names[s]);
      }
      sec = s;
      slot_of_[static_cast<std::size_t>(v)] = n_section_vars_[s]++;
    }
  }
  n_section_vars_[3] = vars_.scratch;
  place_face_variables();
  if (type_ == DataType::packet_of_blocks) residency_ = source_->device_residency();
  if (residency_) {
    reads_ = vars_.copy_in;
    reads_.insert(reads_.end(), vars_.copy_in_out.begin(), vars_.copy_in_out.end());
    writes_ = vars_.copy_in_out;
    writes_.insert(writes_.end(), vars_.copy_out.begin(), vars_.copy_out.end());
    for (const int v : reads_) gathered_vars_ = std::max(gathered_vars_, v + 1);
    for (const int v : writes_) gathered_vars_ = std::max(gathered_vars_, v + 1);
  }
}

DataPacket::~DataPacket() { release(); }

std::string DataPacket::describe() const {
  std::string blocks;
  for (std::size_t i = 0; i < entries_.size() && i < 8; ++i) {
    blocks += (i ? "," : "") + std::to_string(entries_[i].block);
    if (entries_[i].tile >= 0) blocks += "." + std::to_string(entries_[i].tile);
  }
  if (entries_.size() > 8) blocks += ",...";
  return fmt::format("data packet #{} ({}, {} entries [{}], {})", id_, korch::to_string(type_), entries_.size(), blocks,
                     to_string(state_));
}

void DataPacket::require(State state, const char* operation) const {
  if (state_ != state) {
    throw Error::format("{}: {} needs the packet {}, but it is {}: {}", describe(), operation, to_string(state),
                        to_string(state_),
                        state == State::on_device ? "put a data mover (host -> device) in front of this step"
                        : state == State::on_host ? "move the packet back to the host first (data mover device -> host)"
                        : state == State::building ? "add entries before pack()"
                                                   : "follow building -> packed -> on device -> on host -> unpacked");
  }
}

void DataPacket::append(int block, int tile, const Box& box, const Box& interior) {
  require(State::building, "adding an entry");
  PacketEntryMeta m{};
  const auto& bm = source_->block(block);
  m.block = block;
  m.tile = tile;
  m.level = bm.level;
  m.n_cells = static_cast<std::int32_t>(box.cells());
  for (int d = 0; d < 3; ++d) {
    m.lo[d] = box.lo[d];
    m.hi[d] = box.hi[d];
    m.interior_lo[d] = interior.lo[d];
    m.interior_hi[d] = interior.hi[d];
    m.delta[d] = bm.delta[d];
  }
  m.var_stride = m.n_cells;
  add_entry_faces(bm, box);
  entries_.push_back(m);
}

void DataPacket::add_block(int block) {
  if (type_ != DataType::packet_of_blocks) {
    throw Error::format("{}: add_block on a packet of tiles: add its tiles with add_tile", describe());
  }
  const auto& bm = source_->block(block);
  append(block, -1, bm.stored, bm.interior);
  if (residency_) {
    // Used in place when each variable is laid out as the packet indexes it; gathered otherwise.
    const DeviceBlockLayout layout = residency_->device_layout(block);
    const StridedBox box{
        {bm.stored.hi[0] - bm.stored.lo[0], bm.stored.hi[1] - bm.stored.lo[1], bm.stored.hi[2] - bm.stored.lo[2]},
        {layout.stride[1], layout.stride[2], layout.stride[3]}};
    gathered_.push_back(box.layout_right() ? 0 : 1);
  }
}

void DataPacket::add_tile(int block, int tile) {
  if (type_ != DataType::packet_of_tiles) {
    throw Error::format("{}: add_tile on a packet of blocks: add whole blocks with add_block", describe());
  }
  const auto& tiles = source_->tiles_of(block);
  if (tile < 0 || static_cast<std::size_t>(tile) >= tiles.size()) {
    throw Error::format("{}: tile {} of block {} does not exist: the block has tiles 0..{}", describe(), tile, block,
                        tiles.size() - 1);
  }
  const Box& box = tiles[static_cast<std::size_t>(tile)];
  append(block, tile, box, box);
}

std::vector<int> DataPacket::block_ids() const {
  std::vector<int> ids;
  for (const auto& e : entries_) {
    if (ids.empty() || ids.back() != e.block) ids.push_back(e.block);
  }
  return ids;
}

std::pair<int, int> DataPacket::locate(int var) const {
  if (var < 0 || var >= source_->n_vars() || section_of_[static_cast<std::size_t>(var)] < 0) {
    throw Error::format("{}: variable {} is not in this packet: list it in copy_in, copy_in_out or copy_out",
                        describe(), var);
  }
  return {section_of_[static_cast<std::size_t>(var)], slot_of_[static_cast<std::size_t>(var)]};
}

std::pair<int, int> DataPacket::variable_place(int var) const noexcept {
  if (var < 0 || var >= source_->n_vars() || section_of_[static_cast<std::size_t>(var)] < 0) return {-1, -1};
  return {section_of_[static_cast<std::size_t>(var)], slot_of_[static_cast<std::size_t>(var)]};
}

const PacketEntryMeta* DataPacket::device_entries() const {
  require(State::on_device, "device_entries()");
  return static_cast<const PacketEntryMeta*>(device_.data());
}

double* DataPacket::entry_pointer(double* base, std::size_t i, int section, int slot) const {
  const auto& e = entries_.at(i);
  return base + e.offset[section] + static_cast<std::size_t>(slot) * static_cast<std::size_t>(e.n_cells);
}

void DataPacket::pack() {
  require(State::building, "pack()");
  if (entries_.empty()) throw Error::format("{}: pack() on an empty packet: add blocks or tiles first", describe());
  // Section sizes.
  std::size_t at = entries_.size() * meta_doubles_per_entry;
  at = (at + 7) / 8 * 8;  // 64-byte aligned sections
  for (int s = 0; s < 4; ++s) {
    section_begin_[s] = at;
    // A resident packet's data sections are empty where its entries point at the blocks' device
    // copies; a gathered entry has room for its variables in the first.
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      entries_[i].offset[s] = at;
      at += entry_doubles(i, s);
    }
    at = (at + 7) / 8 * 8;
  }
  section_begin_[4] = at;
  total_doubles_ = at;
  // The scratch variables live on the device alone: the host's buffer ends where they begin (for
  // a resident packet, after its metadata), so pinned memory holds only what crosses.
  host_ = pinned_pool_->acquire(section_begin_[3] * sizeof(double));
  auto* base = static_cast<double*>(host_.data());
  for (std::size_t i = 0; i < entries_.size() && !residency_; ++i) {
    const auto& e = entries_[i];
    const auto cells = source_->block_view(e.block);
    detail::copy_box<true>(cells, detail::entry_box(e), vars_.copy_in, base + e.offset[0]);
    detail::copy_box<true>(cells, detail::entry_box(e), vars_.copy_in_out, base + e.offset[1]);
  }
  copy_faces(true);
  state_ = State::packed;
}

void DataPacket::copy_to_device(const DeviceTaskSpace& instance) {
  require(State::packed, "copy_to_device()");
  device_ = device_pool_->acquire(total_doubles_ * sizeof(double));
  auto* dev = static_cast<double*>(device_.data());
  auto* base = static_cast<double*>(host_.data());
  if (residency_) {
    staged_bytes_ = residency_->begin_device_use(block_ids(), reads_, writes_, instance);
    held_on_device_ = true;
  }
  set_device_addresses(dev);
  std::memcpy(base, entries_.data(), entries_.size() * sizeof(PacketEntryMeta));
  copy_to_device_async(instance, dev, base, device_bound_end() * sizeof(double));
  if (residency_) gather_on_device(instance, true, reads_);
  state_ = State::on_device;
}

void DataPacket::set_device_addresses(double* device_buffer) {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    auto& e = entries_[i];
    const bool in_place = residency_ && !gathered_[i];
    const DeviceBlockLayout layout = in_place ? residency_->device_layout(e.block) : DeviceBlockLayout{};
    for (int s = 0; s < 4; ++s) {
      const bool at_block = residency_ && s < static_cast<int>(PacketSection::scratch);
      double* const address = !at_block  ? device_buffer + e.offset[s]
                              : in_place ? layout.data
                                         : device_buffer + e.offset[0];
      e.device_address[s] = reinterpret_cast<std::uintptr_t>(address);
    }
    e.var_stride = in_place ? layout.stride[0] : e.n_cells;
    set_face_addresses(i, device_buffer);
  }
}

// The variables `vars` of every gathered entry between the block's device array and the packet's
// device buffer (to_packet: into the packet), on the device.
void DataPacket::gather_on_device(const DeviceTaskSpace& instance, bool to_packet, const std::vector<int>& vars) const {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!gathered_[i]) continue;
    const auto& e = entries_[i];
    const DeviceBlockLayout layout = residency_->device_layout(e.block);
    const StridedBox box{{e.hi[0] - e.lo[0], e.hi[1] - e.lo[1], e.hi[2] - e.lo[2]},
                         {layout.stride[1], layout.stride[2], layout.stride[3]}};
    for (const int v : vars) {
      double* const packed = reinterpret_cast<double*>(e.device_address[0]) + v * e.var_stride;
      double* const block = layout.data + v * layout.stride[0];
      if (to_packet)
        gather_strided(instance, packed, block, box);
      else
        scatter_strided(instance, block, packed, box);
    }
  }
}

void DataPacket::move_on_device(const DeviceTaskSpace& instance) {
  require(State::on_device, "move_on_device()");
  PoolBuffer target = device_pool_->acquire(total_doubles_ * sizeof(double));
  copy_device_to_device_async(instance, target.data(), device_.data(), total_doubles_ * sizeof(double));
  instance.fence();  // the source buffer goes back to the pool below
  device_ = std::move(target);
  set_device_addresses(static_cast<double*>(device_.data()));
  // The copied metadata still names the old buffer: kernels that read it (PacketPack) need the new.
  auto* base = static_cast<double*>(host_.data());
  std::memcpy(base, entries_.data(), entries_.size() * sizeof(PacketEntryMeta));
  copy_to_device_async(instance, device_.data(), base, section_begin_[0] * sizeof(double));
}

void DataPacket::copy_to_host(const DeviceTaskSpace& instance) {
  require(State::on_device, "copy_to_host()");
  if (residency_) {
    // The action is done: what it wrote is valid in the device copy alone.
    if (std::find(gathered_.begin(), gathered_.end(), 1) != gathered_.end()) {
      gather_on_device(instance, false, writes_);
      instance.fence();  // the blocks' arrays hold the results before the flags say so
    }
    residency_->end_device_use(block_ids(), reads_, writes_);
    held_on_device_ = false;
    if (!has_faces()) {
      state_ = State::on_host;
      return;
    }
  }
  auto* dev = static_cast<char*>(device_.data());
  auto* host = static_cast<char*>(host_.data());
  const std::size_t begin = section_begin_[1] * sizeof(double);
  copy_to_host_async(instance, host + begin, dev + begin, bytes_to_host());
  state_ = State::on_host;
}

void DataPacket::unpack() {
  require(State::on_host, "unpack()");
  device_.release();
  auto* base = static_cast<double*>(host_.data());
  for (const auto& e : entries_) {
    if (residency_) break;  // no cells to copy: the source brings its blocks back when the host asks
    const auto cells = source_->block_view(e.block);
    detail::copy_box<false>(cells, detail::entry_box(e), vars_.copy_in_out, base + e.offset[1]);
    detail::copy_box<false>(cells, detail::entry_box(e), vars_.copy_out, base + e.offset[2]);
  }
  copy_faces(false);
  host_.release();
  state_ = State::unpacked;
}

void DataPacket::release() noexcept {
  if (held_on_device_) {  // a failed cycle: the host may take the grid's variables back
    try {
      residency_->end_device_use(block_ids(), reads_, writes_);
    } catch (...) {  // block ids were checked when the packet was built
    }
    held_on_device_ = false;
  }
  device_.release();
  host_.release();
  if (state_ != State::unpacked) state_ = State::released;
}

std::size_t DataPacket::bytes_to_device() const noexcept { return device_bound_end() * sizeof(double) + staged_bytes_; }

// A resident packet sends its metadata alone, unless it carries faces, which follow the cells.
std::size_t DataPacket::device_bound_end() const noexcept {
  return residency_ && !has_faces() ? section_begin_[0] : section_begin_[2];
}

std::pair<int, int> DataPacket::device_place(int var) const noexcept {
  const auto place = variable_place(var);
  if (place.first < 0 || !residency_) return place;
  return {static_cast<int>(PacketSection::copy_in), var};
}
std::size_t DataPacket::bytes_to_host() const noexcept {
  return (section_begin_[3] - section_begin_[1]) * sizeof(double);
}

DataPacket::DeviceVar DataPacket::device_var(std::size_t i, int var) const {
  require(State::on_device, "device_var()");
  auto [section, slot] = locate(var);
  const auto& e = entries_.at(i);
  double* const first = residency_ ? reinterpret_cast<double*>(e.device_address[0]) + var * e.var_stride
                                   : entry_pointer(static_cast<double*>(device_.data()), i, section, slot);
  return DeviceVar(first, static_cast<std::size_t>(e.hi[0] - e.lo[0]), static_cast<std::size_t>(e.hi[1] - e.lo[1]),
                   static_cast<std::size_t>(e.hi[2] - e.lo[2]));
}

DataPacket::DeviceVar DataPacket::device_scratch(std::size_t i, int scratch) const {
  require(State::on_device, "device_scratch()");
  if (scratch < 0 || scratch >= n_section_vars_[3]) {
    throw Error::format("{}: scratch variable {} does not exist: the packet has {}", describe(), scratch,
                        n_section_vars_[3]);
  }
  const auto& e = entries_.at(i);
  return DeviceVar(entry_pointer(static_cast<double*>(device_.data()), i, 3, scratch),
                   static_cast<std::size_t>(e.hi[0] - e.lo[0]), static_cast<std::size_t>(e.hi[1] - e.lo[1]),
                   static_cast<std::size_t>(e.hi[2] - e.lo[2]));
}

DataPacket::HostVar DataPacket::host_var(std::size_t i, int var) const {
  if (state_ != State::packed && state_ != State::on_host) require(State::on_host, "host_var()");
  if (residency_) {
    throw Error::format(
        "{}: host_var() on a packet of blocks kept in device memory, which holds no cells on the host: read the "
        "blocks (block_view) after the cycle",
        describe());
  }
  auto [section, slot] = locate(var);
  const auto& e = entries_.at(i);
  return HostVar(entry_pointer(static_cast<double*>(host_.data()), i, section, slot),
                 static_cast<std::size_t>(e.hi[0] - e.lo[0]), static_cast<std::size_t>(e.hi[1] - e.lo[1]),
                 static_cast<std::size_t>(e.hi[2] - e.lo[2]));
}

}  // namespace korch
