// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "c_handles.hpp"

#include <korch/error.hpp>

#include <deque>
#include <mutex>
#include <vector>

namespace korch::c_api {

namespace {

// A handle's bits, high to low: a 12-bit mark that no handle korch makes lacks (so that a stray
// value is told apart from a dead handle), the kind (4 bits), the slot's generation (24 bits) and
// the slot (24 bits). A slot's generation grows each time it is freed, and freed slots are reused
// oldest first, so a destroyed handle stays dead for a long time after (2^24 reuses of its slot).
constexpr std::uint64_t mark = 0x6b0;
constexpr int slot_bits = 24, generation_bits = 24, kind_bits = 4;
constexpr std::uint64_t slot_mask = (std::uint64_t{1} << slot_bits) - 1;
constexpr std::uint64_t generation_mask = (std::uint64_t{1} << generation_bits) - 1;
constexpr std::uint64_t kind_mask = (std::uint64_t{1} << kind_bits) - 1;
static_assert(sizeof(std::uintptr_t) >= sizeof(std::uint64_t), "the C API's handles need 64-bit pointers");

struct Decoded {
  bool ours = false;
  unsigned kind = 0;
  std::uint32_t generation = 0;
  std::size_t slot = 0;
};

Decoded decode(std::uintptr_t handle) {
  const std::uint64_t h = handle;
  Decoded d;
  d.ours = (h >> (slot_bits + generation_bits + kind_bits)) == mark;
  d.kind = static_cast<unsigned>((h >> (slot_bits + generation_bits)) & kind_mask);
  d.generation = static_cast<std::uint32_t>((h >> slot_bits) & generation_mask);
  d.slot = static_cast<std::size_t>(h & slot_mask);
  const bool known_kind =
      d.kind >= static_cast<unsigned>(HandleKind::blocks) && d.kind <= static_cast<unsigned>(last_handle_kind);
  d.ours = d.ours && known_kind;
  return d;
}

std::uintptr_t encode(HandleKind kind, std::uint32_t generation, std::size_t slot) {
  return static_cast<std::uintptr_t>((mark << (slot_bits + generation_bits + kind_bits)) |
                                     (std::uint64_t{static_cast<unsigned>(kind)} << (slot_bits + generation_bits)) |
                                     (std::uint64_t{generation} << slot_bits) | std::uint64_t{slot});
}

struct Slot {
  std::uint32_t generation = 0;
  HandleKind kind = HandleKind::blocks;
  std::shared_ptr<HandleObject> object;  // empty: free
};

struct Table {
  std::mutex mutex;
  std::vector<Slot> slots;
  std::deque<std::size_t> free;  // oldest first
};

Table& table() {
  static Table t;
  return t;
}

std::string hex(std::uintptr_t handle) { return fmt::format("{:#x}", static_cast<std::uint64_t>(handle)); }

// The live slot of `handle`, or an error naming what the value is instead. Under the table's mutex.
Slot& live_slot(Table& t, std::uintptr_t handle, HandleKind kind, const char* parameter) {
  const char* wanted = type_name(kind);
  if (handle == 0)
    throw Error::format("{} is NULL: pass a {} that korch made and that is not destroyed", parameter, wanted);
  const Decoded d = decode(handle);
  if (!d.ours)
    throw Error::format("{} ({}) is not a handle that korch made: pass the {} that korch gave, unchanged", parameter,
                        hex(handle), wanted);
  if (d.kind != static_cast<unsigned>(kind))
    throw Error::format("{} ({}) is a {} handle where a {} is needed: pass the right handle", parameter, hex(handle),
                        type_name(static_cast<HandleKind>(d.kind)), wanted);
  if (d.slot >= t.slots.size() || t.slots[d.slot].generation != d.generation || !t.slots[d.slot].object)
    throw Error::format(
        "{} ({}) is a dead {} handle: it was destroyed (with {}_destroy); use a {} that is not "
        "destroyed yet",
        parameter, hex(handle), wanted, wanted, wanted);
  return t.slots[d.slot];
}

}  // namespace

const char* type_name(HandleKind kind) noexcept {
  switch (kind) {
    case HandleKind::blocks: return "korch_blocks";
    case HandleKind::bundle: return "korch_bundle";
    case HandleKind::configuration: return "korch_configuration";
    case HandleKind::neighbours: return "korch_neighbours";
    case HandleKind::exchange: return "korch_exchange";
    case HandleKind::ready: return "korch_ready";
    case HandleKind::forest: return "korch_forest";
  }
  return "korch handle";
}

std::uintptr_t add_handle(HandleKind kind, std::shared_ptr<HandleObject> object) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::size_t slot = t.slots.size();
  if (!t.free.empty()) {
    slot = t.free.front();
    t.free.pop_front();
  } else {
    if (slot > slot_mask)
      throw Error::format("{}: {} handles are alive, the most korch keeps: destroy handles no longer needed",
                          object->label, slot_mask + 1);
    t.slots.emplace_back();
  }
  Slot& s = t.slots[slot];
  s.kind = kind;
  s.object = std::move(object);
  return encode(kind, s.generation, slot);
}

std::shared_ptr<HandleObject> find_handle(std::uintptr_t handle, HandleKind kind, const char* parameter) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return live_slot(t, handle, kind, parameter).object;
}

void remove_handle(std::uintptr_t handle, HandleKind kind, const char* parameter) {
  if (handle == 0) return;               // as free(NULL)
  std::shared_ptr<HandleObject> object;  // freed after the mutex is released
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  Slot& s = live_slot(t, handle, kind, parameter);
  if (s.object->readers > 0 || s.object->writer)
    throw Error::format(
        "{} ({}) is in use by a running {}: destroy it after that call returns, not from an action "
        "routine of its cycle or from another thread meanwhile",
        parameter, s.object->label, s.object->readers > 0 ? "cycle" : "call on another thread");
  object = std::move(s.object);
  s.generation = (s.generation + 1) & static_cast<std::uint32_t>(generation_mask);
  t.free.push_back(decode(handle).slot);
}

Lease::Lease(std::shared_ptr<HandleObject> object, Mode mode, const char* call)
    : object_(std::move(object)), mode_(mode) {
  std::lock_guard<std::mutex> lock(table().mutex);
  HandleObject& o = *object_;
  if (o.writer)
    throw Error::format("{} is being changed by a call on another thread: {} it after that call returns", o.label,
                        call);
  if (mode == exclusive && o.readers > 0)
    throw Error::format(
        "{} is in use by a running cycle: {} it after korch_execute returns, not from an action "
        "routine of that cycle",
        o.label, call);
  if (mode == exclusive) {
    o.writer = true;
  } else {
    ++o.readers;
  }
}

Lease::~Lease() {
  if (!object_) return;  // moved from
  std::lock_guard<std::mutex> lock(table().mutex);
  if (mode_ == exclusive) {
    object_->writer = false;
  } else {
    --object_->readers;
  }
}

}  // namespace korch::c_api
