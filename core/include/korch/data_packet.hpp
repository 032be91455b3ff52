// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DataPacket: blocks or tiles gathered into one pool buffer so that each transfer direction is a
// single contiguous copy (design: docs/data-packets.md).
//
// Layout of the buffer (the same on the pinned host side and on the device side, where the host's
// ends before the scratch variables, which live on the device alone), in doubles:
//   [ entry metadata | copy-in | copy-in-out | copy-out | scratch ]
//   host -> device: metadata + copy-in + copy-in-out   (one copy)
//   device -> host: copy-in-out + copy-out              (one copy)
// The metadata section holds one PacketEntryMeta per block/tile (box, deltas, level, the offsets and
// device addresses of the entry's data), so kernels on the device find everything inside the packet.
// Within a section each entry stores its variables one after the other, each as a LayoutRight
// (i, j, k) array over the entry's box: a packet of blocks stores whole blocks (guard cells
// included), a packet of tiles stores the tiles' interior boxes.
//
// Life cycle (State): building -> pack() -> packed -> copy_to_device() -> on_device
//   -> copy_to_host() -> on_host -> unpack() -> unpacked (buffers released).
// Copies are asynchronous on the given instance (the calling thread's own stream on CUDA/HIP): fence
// that instance before another thread touches the packet. release() returns both buffers to their
// pools; it is safe early and twice, and the destructor calls it (the last owner releases).
//
// A packet of blocks of a source with device copies (a resident grid, a BlockList of device
// arrays: DataSource::device_residency, docs/residency.md) stores no cells of its own where it can
// point at them: its entries address the blocks in device memory. copy_to_device() copies there
// only the variables the packet reads (copy-in and copy-in-out) whose device copy is stale and marks
// the copy-in-out ones valid on the device alone (the action may change them); copy_to_host()
// copies nothing across and marks the variables the action wrote (copy-in-out and copy-out) valid
// on the device alone. The source's host accessors bring them back when the host asks. Its buffers
// hold the entry metadata and scratch variables, and, for a block whose device array is not laid
// out as korch packs (each variable LayoutRight over the stored box), a device-side copy of its
// variables, gathered before the action and scattered back after it without leaving the device.
//
// Face variables (PacketVariables::face_copy_*, DataSource::face_view) travel in the same sections,
// after each entry's cells: per variable, the faces across each axis the block has faces across,
// each LayoutRight over face_box(entry's box, axis). A packet of tiles carries the faces bounding
// each tile (two tiles share the face between them). Faces live in host memory in every source, so
// a resident packet carries them through its buffer too (docs/data-packets.md, "Face variables").
#pragma once

#include <korch/backend/memory_pool.hpp>
#include <korch/backend/spaces.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/data_item.hpp>
#include <korch/data_type.hpp>
#include <korch/data_source.hpp>
#include <korch/grid.hpp>
#include <korch/device_residency.hpp>
#include <korch/packet_variables.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace korch {

enum class PacketSection : int { copy_in = 0, copy_in_out = 1, copy_out = 2, scratch = 3 };

struct PacketEntryMeta {
  std::int32_t block;
  std::int32_t tile;  // -1 in a packet of blocks
  std::int32_t level;
  std::int32_t n_cells;
  std::int32_t lo[3];  // block-local box stored in the packet
  std::int32_t hi[3];
  std::int32_t interior_lo[3];  // block-local interior (of the block, or the tile's box)
  std::int32_t interior_hi[3];
  double delta[3];
  std::int64_t var_stride;          // doubles from one variable of the entry to the next at its device addresses
  std::uint64_t offset[4];          // first double of the entry in each section, from the buffer start
  std::uint64_t device_address[4];  // the same on the device (valid once on the device)
  // Face variables (valid once on the device): in section s the entry's faces start at
  // face_address[s]; one variable's faces take face_stride doubles, those across axis a starting
  // face_offset[a] into them (-1: the block has no faces across a).
  std::uint64_t face_address[3];
  std::int64_t face_stride;
  std::int64_t face_offset[3];
};

class DataPacket : public DataItem {
 public:
  enum class State { building, packed, on_device, on_host, unpacked, released };
  using DeviceVar =
      Kokkos::View<double***, Kokkos::LayoutRight, DeviceMemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostVar =
      Kokkos::View<double***, Kokkos::LayoutRight, PinnedHostMemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  // type: packet_of_blocks or packet_of_tiles. The pools must outlive the packet's transfers.
  DataPacket(const DataSource& source, DataType type, PacketVariables variables, MemoryPool& pinned_pool,
             MemoryPool& device_pool);
  ~DataPacket() override;
  std::string describe() const override;
  Kind kind() const noexcept override { return Kind::packet; }

  DataType data_type() const noexcept { return type_; }
  State state() const noexcept { return state_; }
  const DataSource& source() const noexcept { return *source_; }
  // Scratch variables per entry (PacketVariables::scratch): device_scratch's range.
  int scratch_count() const noexcept { return n_section_vars_[3]; }
  // The source as a korch::Grid; throws korch::Error naming the source when it is another kind.
  const Grid& grid() const { return as_grid(*source_); }
  std::uint64_t id() const noexcept { return id_; }

  // building only
  void add_block(int block);
  void add_tile(int block, int tile);

  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  const PacketEntryMeta& entry(std::size_t i) const { return entries_.at(i); }
  // The block ids in the packet, in order (each once).
  std::vector<int> block_ids() const;

  // building -> packed: takes a pinned buffer, writes metadata, copy-in and copy-in-out data.
  void pack();
  // packed -> on_device: takes a device buffer; one asynchronous copy on `instance`.
  void copy_to_device(const DeviceTaskSpace& instance);
  // on_device -> on_device in a fresh device allocation (device-to-device mover).
  void move_on_device(const DeviceTaskSpace& instance);
  // on_device -> on_host: one asynchronous copy of copy-in-out + copy-out on `instance`.
  void copy_to_host(const DeviceTaskSpace& instance);
  // on_host -> unpacked: copy-in-out and copy-out data back into the source; releases the buffers.
  void unpack();
  // Returns both buffers to their pools (safe in any state, and twice).
  void release() noexcept;

  // A variable of entry i on the device (state on_device); index it with entry-local (i, j, k),
  // 0 being the entry's lo. Copy-in variables are read-only by contract.
  DeviceVar device_var(std::size_t i, int var) const;
  DeviceVar device_scratch(std::size_t i, int scratch) const;
  // The same on the pinned host buffer (states packed and on_host).
  HostVar host_var(std::size_t i, int var) const;
  // Face variable `var` of entry i across `axis`, over face_box of the entry's box in entry-local
  // indices: on the device (state on_device; face_copy_in ones read-only by contract) and on the
  // pinned host buffer (states packed and on_host). Throws korch::Error naming a face variable the
  // packet does not carry or an axis the entry's block has no faces across.
  DeviceVar device_face(std::size_t i, int axis, int var) const;
  HostVar host_face(std::size_t i, int axis, int var) const;
  // Whether the packet carries face variable `var`; where it lies: (section, slot), or (-1, -1).
  bool carries_face(int var) const noexcept;
  std::pair<int, int> face_place(int var) const noexcept;

  // Where variable `var` is stored: (section, slot), or (-1, -1) when the packet does not carry it.
  std::pair<int, int> variable_place(int var) const noexcept;
  // The metadata section in device memory: one PacketEntryMeta per entry (state on_device).
  const PacketEntryMeta* device_entries() const;

  // Whether the entries address the source's device copies (see above).
  bool resident() const noexcept { return residency_ != nullptr; }
  // Where variable `var` lies for device addressing: the entry's device_address[section] plus slot
  // times the entry's var_stride. The packet's own (section, slot), or (copy_in, var) in a resident
  // packet, whose device_address[copy_in] is the block's variable 0 on the device; (-1, -1) when not
  // carried.
  std::pair<int, int> device_place(int var) const noexcept;

  // Bytes copy_to_device() copied (metadata, copy-in and copy-in-out data; in a resident packet the
  // metadata and the stale variables it read) and copy_to_host() copies.
  std::size_t bytes_to_device() const noexcept;
  std::size_t bytes_to_host() const noexcept;
  std::size_t buffer_bytes() const noexcept { return total_doubles_ * sizeof(double); }
  static const char* to_string(State state) noexcept;

 private:
  void require(State state, const char* operation) const;
  std::pair<int, int> locate(int var) const;  // (section, slot)
  double* entry_pointer(double* base, std::size_t i, int section, int slot) const;
  void append(int block, int tile, const Box& box, const Box& interior);
  void set_device_addresses(double* device_buffer);
  // Faces (data_packet_faces.cpp).
  void place_face_variables();
  void add_entry_faces(const BlockMeta& block, const Box& box);
  int cell_vars_stored(std::size_t i, int section) const noexcept;
  std::size_t entry_doubles(std::size_t i, int section) const noexcept;
  double* face_pointer(double* base, std::size_t i, int axis, int var) const;
  void set_face_addresses(std::size_t i, double* device_buffer);
  void copy_faces(bool to_packet);
  bool has_faces() const noexcept { return n_section_faces_[0] + n_section_faces_[1] + n_section_faces_[2] > 0; }
  std::size_t device_bound_end() const noexcept;  // in doubles: the copy to the device ends here

  void gather_on_device(const DeviceTaskSpace& instance, bool to_packet, const std::vector<int>& vars) const;

  DeviceResidency* residency_ = nullptr;  // set for a packet of blocks of a source with device copies
  std::vector<int> reads_, writes_;       // resident packets: the source variables read and written
  std::vector<unsigned char> gathered_;   // resident packets, per entry: copied on the device (see above)
  int gathered_vars_ = 0;                 // variables 0..gathered_vars_-1 have room in a gathered entry
  bool held_on_device_ = false;           // between GridResidency::begin_device_use and end_device_use
  std::size_t staged_bytes_ = 0;          // resident packets: what copy_to_device() copied of the grid

  const DataSource* source_;
  DataType type_;
  PacketVariables vars_;
  std::vector<int> section_of_;  // per grid variable: section or -1
  std::vector<int> slot_of_;
  int n_section_vars_[4] = {0, 0, 0, 0};
  std::vector<int> face_section_of_;  // per face variable: section or -1
  std::vector<int> face_slot_of_;
  int n_section_faces_[3] = {0, 0, 0};
  // Per entry, the faces it stores of one face variable across each axis (0: none), and their sum.
  std::vector<std::array<std::size_t, 3>> face_counts_;
  std::vector<std::size_t> faces_per_var_;
  MemoryPool* pinned_pool_;
  MemoryPool* device_pool_;
  std::vector<PacketEntryMeta> entries_;
  std::size_t section_begin_[5] = {0, 0, 0, 0, 0};  // in doubles
  std::size_t total_doubles_ = 0;
  PoolBuffer host_;
  PoolBuffer device_;
  State state_ = State::building;
  std::uint64_t id_;
};

}  // namespace korch
