// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The message-driven executor's private types: messages and the queue items that carry them, and
// the compiled invocation (MessageExecutor::Program) that compile (message_compile.cpp) builds,
// runs (message_run.cpp) use and dump (message_dump.cpp) prints.
#pragma once

#include <korch/data_item.hpp>
#include <korch/mesh/message_executor.hpp>
#include <korch/mesh/par_loop.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace korch::mesh {
namespace detail {

// bytes a message carries: one dat element, or the INC globals of an end
inline constexpr std::size_t kPayload = 64;
inline constexpr std::size_t kAlign = alignof(std::max_align_t);
inline constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
inline constexpr std::size_t kStripes = 4096;  // device locks

inline std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

enum class MessageKind : std::uint8_t { Begin, ReadRecv, WriteRecv, End };

struct Message {
  MessageKind kind;
  std::uint16_t arg;  // ReadRecv: the consuming argument; WriteRecv: the sending argument
  std::int32_t dst;   // device, or -1 for the controller
  std::int32_t src;   // WriteRecv of an INC: the inbox entry; End: the sending device
  alignas(8) unsigned char payload[kPayload];
};

struct MessageBatch final : DataItem {
  std::vector<Message> messages;
  std::string describe() const override { return fmt::format("batch of {} mesh messages", messages.size()); }
};
struct DeliveryToken final : DataItem {
  std::string describe() const override { return "mesh message delivery token"; }
};

}  // namespace detail

// A compiled invocation: its devices (sets), read dats and their edges, write arguments, landing
// pads, the devices' properties and state, and the records of the current run.
struct MessageExecutor::Program {
  struct SetSlot {
    Set set;
    int base = 0;
    bool iteration = false;
    std::vector<int> read_dats;  // this set's indirect read dats (bit b of the read mask)
    std::uint32_t read_send_mask_all = 0;
    std::uint32_t write_send_mask_all = 0;  // iteration set: one bit per indirect write argument
    std::vector<std::string> dats;          // dats of this set the invocation touches (state members)
    bool write_target = false;
  };
  struct ReadDat {
    std::shared_ptr<detail::DatCore> dat;
    int slot = 0;
    int arg = 0;  // first argument reading it (whose base pointer is the dat's state)
    std::size_t bytes = 0;
    std::vector<int> offsets;                    // per element of its set: consumers[offsets[t]..offsets[t+1])
    std::vector<std::pair<int, int>> consumers;  // (iteration element, argument)
  };

  // Per iteration element on a rank's share: whether it runs here and whether its reductions count
  // (Role::Owned). Empty: every element is owned (one rank).
  enum class Role : std::uint8_t { Skipped, Halo, Owned };
  std::vector<Role> roles;
  bool runs(int element) const { return roles.empty() || roles[static_cast<std::size_t>(element)] != Role::Skipped; }
  bool reduces(int element) const { return roles.empty() || roles[static_cast<std::size_t>(element)] == Role::Owned; }

  // The devices the controller sends begin to and waits for: every device (empty), or on a rank's
  // share those it involves (running iteration elements, read sources and write targets of them).
  std::vector<int> begun_devices;
  int n_begun() const { return begun_devices.empty() ? n_devices : static_cast<int>(begun_devices.size()); }
  int begun_device(int k) const { return begun_devices.empty() ? k : begun_devices[static_cast<std::size_t>(k)]; }

  std::string inv;
  std::string loop_name;
  std::vector<ArgInfo> args;
  std::vector<SetSlot> slots;
  int iter_slot = 0;
  int n_devices = 0;
  int n_iter = 0;
  std::vector<ReadDat> read_dats;
  std::vector<int> read_dat_of_arg;  // per argument: its read dat, or -1
  std::vector<int> write_args;       // indirect WRITE/RW/INC arguments (bit order)
  std::vector<int> write_slot_of_arg;
  std::vector<int> reduction_args;      // global INC/MIN/MAX
  std::vector<std::size_t> end_offset;  // per argument: offset in the end payload
  std::size_t end_bytes = 0;
  std::vector<std::size_t> pad_offset;  // per argument: landing pad offset in the device's pad block
  std::size_t pad_stride = 0;
  std::unique_ptr<std::max_align_t[]> pads;

  // INC writes wait in their target's inbox until all of them are in, then add in writer order
  // (ascending iteration element, then argument): the same order on any number of ranks and with
  // any message timing (docs/mesh.md, "Ranks").
  struct InboxEntry {
    std::size_t offset = 0;  // bytes into inbox
    int arg = 0;
  };
  std::vector<int> inbox_entry_of;  // per (iteration element, write bit): its entry, or -1
  std::vector<int> inbox_offsets;   // per device: its entries [inbox_offsets[d], inbox_offsets[d + 1])
  std::vector<InboxEntry> inbox_entries;
  std::unique_ptr<std::max_align_t[]> inbox;
  unsigned char* inbox_at(int entry) const {
    return reinterpret_cast<unsigned char*>(inbox.get()) + inbox_entries[static_cast<std::size_t>(entry)].offset;
  }
  // Each device's end payload, combined in device order once all are in (not in arrival order).
  std::vector<unsigned char> end_payloads;

  // properties
  std::vector<int> read_recv_total, write_recv_expected;
  // state
  std::vector<std::uint8_t> in_progress, begun;
  std::vector<int> read_recv_count, write_recv_count;
  std::vector<std::uint32_t> read_send_mask, write_send_mask;
  // records of the current run
  std::vector<int> r_begin, r_end, r_execute, r_read_recv, r_write_recv;

  // per run
  const ParLoopBase* loop = nullptr;
  std::vector<unsigned char*> base;  // per argument: dat host bytes or global bytes
  std::unique_ptr<std::mutex[]> locks{new std::mutex[detail::kStripes]};

  int slot_of(int d) const {
    int s = 0;
    while (s + 1 < static_cast<int>(slots.size()) && d >= slots[static_cast<std::size_t>(s) + 1].base) ++s;
    return s;
  }
  unsigned char* pad(int element, int arg) const {
    return reinterpret_cast<unsigned char*>(pads.get()) + static_cast<std::size_t>(element) * pad_stride +
           pad_offset[static_cast<std::size_t>(arg)];
  }
  std::string device_name(int d) const {
    const int s = slot_of(d);
    return fmt::format("set_{}[{}]", slots[static_cast<std::size_t>(s)].set.name(),
                       d - slots[static_cast<std::size_t>(s)].base);
  }
};

namespace detail {

// The compile step of an invocation named `inv` (done once per loop and cached by the executor). On
// a rank's share only `elements` (ascending) of the iteration set run, and only those with
// is_owned[e] reduce into globals; null: every element.
std::unique_ptr<MessageExecutor::Program> compile(const ParLoopBase& loop, std::string inv,
                                                  const std::vector<int>* elements = nullptr,
                                                  const std::vector<char>* is_owned = nullptr);

}  // namespace detail
}  // namespace korch::mesh
