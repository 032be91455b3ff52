// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The message-driven executor's compile step: from a par_loop to its device graph (sets as device
// ranges, read dats with their consumers, write arguments with their targets, landing pads, and
// each device's properties and state).
#include "message_program.hpp"

#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace korch::mesh::detail {

namespace {

using Program = MessageExecutor::Program;

// The slot of set s, added after the others on first use.
int slot_for(Program& p, const Set& s) {
  for (std::size_t k = 0; k < p.slots.size(); ++k)
    if (p.slots[k].set == s) return static_cast<int>(k);
  Program::SetSlot slot;
  slot.set = s;
  p.slots.push_back(slot);
  return static_cast<int>(p.slots.size()) - 1;
}

// The read dat of argument i (a dat read through a map), added on first use.
int read_dat_for(Program& p, const ArgInfo& a, std::size_t i, int s) {
  for (std::size_t k = 0; k < p.read_dats.size(); ++k)
    if (p.read_dats[k].dat == a.dat) return static_cast<int>(k);
  Program::ReadDat rd;
  rd.dat = a.dat;
  rd.slot = s;
  rd.arg = static_cast<int>(i);
  rd.bytes = a.element_bytes;
  p.read_dats.push_back(std::move(rd));
  const int r = static_cast<int>(p.read_dats.size()) - 1;
  p.slots[static_cast<std::size_t>(s)].read_dats.push_back(r);
  return r;
}

// Sets involved: iteration set first, then indirect read / write sets in argument order; the
// read dats, the write arguments and the send masks of each set.
void collect_sets(Program& p, const ParLoopBase& loop) {
  const auto& args = p.args;
  const std::size_t na = args.size();
  auto fail = [&](std::size_t i, const std::string& why) {
    return Error::format("message-driven executor: par_loop '{}': argument {} ({}) {}", loop.name(), i,
                         args[i].describe(), why);
  };
  p.iter_slot = slot_for(p, loop.set());
  p.slots[0].iteration = true;
  p.read_dat_of_arg.assign(na, -1);
  p.write_slot_of_arg.assign(na, -1);
  p.pad_offset.assign(na, kNone);
  p.end_offset.assign(na, kNone);
  for (std::size_t i = 0; i < na; ++i) {
    const ArgInfo& a = args[i];
    if (a.is_dat() && a.element_bytes > kPayload) {
      throw fail(i, fmt::format("has {} bytes per element; a message carries at most {}", a.element_bytes, kPayload));
    }
    if (a.is_dat()) {
      auto& names = p.slots[static_cast<std::size_t>(slot_for(p, a.dat->set()))].dats;
      if (std::find(names.begin(), names.end(), a.dat->name()) == names.end()) names.push_back(a.dat->name());
    }
    if (!a.indirect()) continue;
    const int s = slot_for(p, a.dat->set());
    if (a.access == Access::Read || a.access == Access::RW) p.read_dat_of_arg[i] = read_dat_for(p, a, i, s);
    if (modifies(a.access)) {
      if ((a.access == Access::Write || a.access == Access::RW) && !a.map.injective(a.index)) {
        throw fail(i, fmt::format("is rejected: two elements of '{}' share a target through map '{}'[{}], so their "
                                  "WRITE/RW messages would race; use INC, or a map that is one-to-one at that index",
                                  loop.set().name(), a.map.name(), a.index));
      }
      p.write_args.push_back(static_cast<int>(i));
      p.write_slot_of_arg[i] = s;
      p.slots[static_cast<std::size_t>(s)].write_target = true;
    }
  }
  for (auto& slot : p.slots) {
    if (slot.read_dats.size() > 32)
      throw Error::format("par_loop '{}': more than 32 indirect read dats on set '{}'", loop.name(), slot.set.name());
    slot.read_send_mask_all = static_cast<std::uint32_t>((std::uint64_t{1} << slot.read_dats.size()) - 1);
  }
  if (p.write_args.size() > 32)
    throw Error::format("par_loop '{}': more than 32 indirect write arguments", loop.name());
  p.slots[0].write_send_mask_all = static_cast<std::uint32_t>((std::uint64_t{1} << p.write_args.size()) - 1);
}

// Landing pads on the iteration set: arg{i}_buffer for indirect arguments, global_{name} for
// mutable globals. End payload: the reduction globals.
void lay_out_pads(Program& p, const ParLoopBase& loop) {
  std::size_t off = 0;
  for (std::size_t i = 0; i < p.args.size(); ++i) {
    const ArgInfo& a = p.args[i];
    const bool mutable_global = !a.is_dat() && a.global->kind() == GlobalKind::Mutable;
    if (a.indirect() || mutable_global) {
      p.pad_offset[i] = off;
      off += round_up(a.element_bytes);
    }
    if (!a.is_dat() && modifies(a.access)) {
      p.reduction_args.push_back(static_cast<int>(i));
      p.end_offset[i] = p.end_bytes;
      p.end_bytes += round_up(a.element_bytes);
    }
  }
  if (p.end_bytes > kPayload) {
    throw Error::format(
        "message-driven executor: par_loop '{}': its INC/MIN/MAX globals need {} bytes in {}_end, a "
        "message carries at most {}",
        loop.name(), p.end_bytes, p.inv, kPayload);
  }
  p.pad_stride = std::max<std::size_t>(off, 0);
}

// Devices: consecutive ranges per set; the landing pads of every iteration device, zeroed.
void number_devices(Program& p, const ParLoopBase& loop) {
  int next = 0;
  for (auto& slot : p.slots) {
    slot.base = next;
    next += slot.set.size();
  }
  p.n_devices = next;
  p.n_iter = loop.set().size();
  if (p.pad_stride > 0) {
    const std::size_t words =
        (p.pad_stride * static_cast<std::size_t>(p.n_iter) + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
    p.pads.reset(new std::max_align_t[std::max<std::size_t>(words, 1)]);
    std::memset(static_cast<void*>(p.pads.get()), 0, std::max<std::size_t>(words, 1) * sizeof(std::max_align_t));
  }
}

// Read edges: consumers per (read dat, element of its set), CSR.
void build_read_edges(Program& p) {
  const auto& args = p.args;
  const std::size_t na = args.size();
  for (auto& rd : p.read_dats) {
    const int size = p.slots[static_cast<std::size_t>(rd.slot)].set.size();
    rd.offsets.assign(static_cast<std::size_t>(size) + 1, 0);
    for (std::size_t i = 0; i < na; ++i) {
      if (p.read_dat_of_arg[i] < 0 || p.read_dats[static_cast<std::size_t>(p.read_dat_of_arg[i])].dat != rd.dat)
        continue;
      for (int e = 0; e < p.n_iter; ++e)
        if (p.runs(e)) ++rd.offsets[static_cast<std::size_t>(args[i].map(e, args[i].index)) + 1];
    }
    for (int t = 0; t < size; ++t)
      rd.offsets[static_cast<std::size_t>(t) + 1] += rd.offsets[static_cast<std::size_t>(t)];
    rd.consumers.resize(static_cast<std::size_t>(rd.offsets.back()));
    std::vector<int> fill(rd.offsets.begin(), rd.offsets.end() - 1);
    for (int e = 0; e < p.n_iter; ++e) {
      if (!p.runs(e)) continue;
      for (std::size_t i = 0; i < na; ++i) {
        if (p.read_dat_of_arg[i] < 0 || p.read_dats[static_cast<std::size_t>(p.read_dat_of_arg[i])].dat != rd.dat)
          continue;
        const int t = args[i].map(e, args[i].index);
        rd.consumers[static_cast<std::size_t>(fill[static_cast<std::size_t>(t)]++)] = {e, static_cast<int>(i)};
      }
    }
  }
}

// Device properties (reads and writes each device expects), state and records, all zero.
void set_up_devices(Program& p) {
  const std::size_t na = p.args.size();
  const std::size_t nd = static_cast<std::size_t>(p.n_devices);
  p.read_recv_total.assign(nd, 1);  // begin counts as a read
  p.write_recv_expected.assign(nd, 0);
  int n_reads = 0;
  for (std::size_t i = 0; i < na; ++i) n_reads += p.read_dat_of_arg[i] >= 0 ? 1 : 0;
  for (int e = 0; e < p.n_iter; ++e)
    if (p.runs(e)) p.read_recv_total[static_cast<std::size_t>(e)] += n_reads;
  for (int i : p.write_args) {
    const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
    const int base = p.slots[static_cast<std::size_t>(p.write_slot_of_arg[static_cast<std::size_t>(i)])].base;
    for (int e = 0; e < p.n_iter; ++e)
      if (p.runs(e)) ++p.write_recv_expected[static_cast<std::size_t>(base + a.map(e, a.index))];
  }
  p.in_progress.assign(nd, 0);
  p.begun.assign(nd, 0);
  p.read_recv_count.assign(nd, 0);
  p.write_recv_count.assign(nd, 0);
  p.read_send_mask.assign(nd, 0);
  p.write_send_mask.assign(nd, 0);
  p.r_begin.assign(nd, 0);
  p.r_end.assign(nd, 0);
  p.r_execute.assign(nd, 0);
  p.r_read_recv.assign(nd, 0);
  p.r_write_recv.assign(nd, 0);
  p.base.assign(na, nullptr);
}

// The inboxes of the INC write targets: entries per target in writer order, one per (running
// iteration element, INC write argument).
void build_inboxes(Program& p) {
  const std::size_t nw = p.write_args.size();
  p.inbox_entry_of.assign(static_cast<std::size_t>(p.n_iter) * nw, -1);
  p.inbox_offsets.assign(static_cast<std::size_t>(p.n_devices) + 1, 0);
  auto target = [&p](int e, int i) {
    const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
    return p.slots[static_cast<std::size_t>(p.write_slot_of_arg[static_cast<std::size_t>(i)])].base + a.map(e, a.index);
  };
  auto for_each_inc = [&p, nw](auto&& visit) {
    for (int e = 0; e < p.n_iter; ++e)
      if (p.runs(e))
        for (std::size_t b = 0; b < nw; ++b)
          if (p.args[static_cast<std::size_t>(p.write_args[b])].access == Access::Inc) visit(e, b, p.write_args[b]);
  };
  for_each_inc([&](int e, std::size_t, int i) { ++p.inbox_offsets[static_cast<std::size_t>(target(e, i)) + 1]; });
  for (std::size_t d = 0; d + 1 < p.inbox_offsets.size(); ++d) p.inbox_offsets[d + 1] += p.inbox_offsets[d];
  p.inbox_entries.resize(static_cast<std::size_t>(p.inbox_offsets.back()));
  std::vector<int> fill(p.inbox_offsets.begin(), p.inbox_offsets.end() - 1);
  for_each_inc([&](int e, std::size_t b, int i) {
    const int k = fill[static_cast<std::size_t>(target(e, i))]++;
    p.inbox_entries[static_cast<std::size_t>(k)].arg = i;
    p.inbox_entry_of[static_cast<std::size_t>(e) * nw + b] = k;
  });
  std::size_t bytes = 0;
  for (auto& entry : p.inbox_entries) {
    entry.offset = bytes;
    bytes += round_up(p.args[static_cast<std::size_t>(entry.arg)].element_bytes);
  }
  const std::size_t words = (bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  p.inbox.reset(new std::max_align_t[std::max<std::size_t>(words, 1)]);
  p.end_payloads.assign(p.end_bytes > 0 ? static_cast<std::size_t>(p.n_devices) * p.end_bytes : 0, 0);
}

// On a rank's share: the devices the run involves, ascending; the others would only begin and end.
void choose_begun_devices(Program& p) {
  std::vector<char> involved(static_cast<std::size_t>(p.n_devices), 0);
  const int iter_base = p.slots[static_cast<std::size_t>(p.iter_slot)].base;
  for (int e = 0; e < p.n_iter; ++e)
    if (p.runs(e)) involved[static_cast<std::size_t>(iter_base + e)] = 1;
  for (int d = 0; d < p.n_devices; ++d)
    if (p.write_recv_expected[static_cast<std::size_t>(d)] > 0) involved[static_cast<std::size_t>(d)] = 1;
  for (const auto& rd : p.read_dats) {
    const int base = p.slots[static_cast<std::size_t>(rd.slot)].base;
    for (std::size_t t = 0; t + 1 < rd.offsets.size(); ++t)
      if (rd.offsets[t + 1] > rd.offsets[t]) involved[static_cast<std::size_t>(base) + t] = 1;
  }
  for (int d = 0; d < p.n_devices; ++d)
    if (involved[static_cast<std::size_t>(d)]) p.begun_devices.push_back(d);
}

}  // namespace

std::unique_ptr<MessageExecutor::Program> compile(const ParLoopBase& loop, std::string inv,
                                                  const std::vector<int>* elements, const std::vector<char>* is_owned) {
  auto p = std::make_unique<Program>();
  if (elements) {  // a rank's share: the other elements are devices that only begin and end
    p->roles.assign(static_cast<std::size_t>(loop.set().size()), Program::Role::Skipped);
    for (const int e : *elements)
      p->roles[static_cast<std::size_t>(e)] =
          (*is_owned)[static_cast<std::size_t>(e)] ? Program::Role::Owned : Program::Role::Halo;
  }
  p->inv = std::move(inv);
  p->loop_name = loop.name();
  p->args = loop.args();
  collect_sets(*p, loop);
  lay_out_pads(*p, loop);
  number_devices(*p, loop);
  build_read_edges(*p);
  set_up_devices(*p);
  build_inboxes(*p);
  if (!p->roles.empty()) choose_begun_devices(*p);
  return p;
}

}  // namespace korch::mesh::detail
