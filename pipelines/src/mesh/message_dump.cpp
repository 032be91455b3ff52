// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The message-driven executor's text dump of a compiled device graph: graph properties, device
// types with their pins, state and properties, devices, and edges.
#include "message_program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace korch::mesh {

namespace {

using Program = MessageExecutor::Program;

// A device type set_{name}: its devices, state, properties and pins.
void dump_device_type(std::ostringstream& o, const Program& p, const Program::SetSlot& s) {
  const std::string& inv = p.inv;
  const std::string& sn = s.set.name();
  o << fmt::format("device type set_{} ({} devices{}{}{}):\n", sn, s.set.size(), s.iteration ? ", iteration set" : "",
                   s.read_dats.empty() ? "" : ", indirect read set", s.write_target ? ", indirect write set" : "");
  o << "  state:";
  for (const auto& d : s.dats) o << fmt::format(" set_{}::dat_{}", sn, d);
  if (s.iteration) {
    for (std::size_t i = 0; i < p.args.size(); ++i) {
      const ArgInfo& a = p.args[i];
      if (a.indirect())
        o << fmt::format(" {}_arg{}_buffer : {}[{}]", inv, i, a.scalar, a.dim);
      else if (!a.is_dat() && a.global->kind() == GlobalKind::Mutable)
        o << fmt::format(" global_{} : {}[{}]", a.global->name(), a.scalar, a.dim);
    }
  }
  o << fmt::format(" {0}_in_progress {0}_read_recv_count {0}_write_recv_count {0}_read_send_mask {0}_write_send_mask\n",
                   inv);
  o << fmt::format("  type properties: {}_{}_read_send_mask_all = {:#x}, {}_{}_write_send_mask_all = {:#x}\n", inv, sn,
                   s.read_send_mask_all, inv, sn, s.write_send_mask_all);
  o << fmt::format("  device properties: {0}_read_recv_total (begin + reads expected), {0}_write_recv_expected\n", inv);
  o << fmt::format("  input pins: {}_begin", inv);
  if (s.iteration)
    for (std::size_t i = 0; i < p.args.size(); ++i)
      if (p.read_dat_of_arg[i] >= 0) o << fmt::format(", {}_arg{}_read_recv", inv, i);
  std::vector<std::string> wr;
  for (int i : p.write_args)
    if (&p.slots[static_cast<std::size_t>(p.write_slot_of_arg[static_cast<std::size_t>(i)])] == &s) {
      std::string pin = fmt::format("{}_dat_{}_write_recv", inv, p.args[static_cast<std::size_t>(i)].dat->name());
      if (std::find(wr.begin(), wr.end(), pin) == wr.end()) wr.push_back(pin);
    }
  for (const auto& w : wr) o << ", " << w;
  o << fmt::format("\n  output pins: {}_end", inv);
  for (int r : s.read_dats)
    o << fmt::format(", {}_dat_{}_read_send", inv, p.read_dats[static_cast<std::size_t>(r)].dat->name());
  if (s.iteration) {
    o << fmt::format(", {}_execute", inv);
    for (int i : p.write_args) o << fmt::format(", {}_arg{}_write_send", inv, i);
  }
  o << "\n";
}

// The read, write, begin and end edges (at most max_items of each read dat and write argument).
void dump_edges(std::ostringstream& o, const Program& p, std::size_t max_items) {
  const std::string& inv = p.inv;
  o << "edges:\n";
  const std::string iter = p.slots[0].set.name();
  for (const auto& rd : p.read_dats) {
    const std::string& sn = p.slots[static_cast<std::size_t>(rd.slot)].set.name();
    std::size_t shown = 0;
    for (std::size_t t = 0; t + 1 < rd.offsets.size() && shown < max_items; ++t)
      for (int k = rd.offsets[t]; k < rd.offsets[t + 1] && shown < max_items; ++k, ++shown) {
        const auto& [e, arg] = rd.consumers[static_cast<std::size_t>(k)];
        o << fmt::format("  set_{}[{}].{}_dat_{}_read_send -> set_{}[{}].{}_arg{}_read_recv\n", sn, t, inv,
                         rd.dat->name(), iter, e, inv, arg);
      }
    o << fmt::format("  ({} read edges from {}_dat_{}_read_send)\n", rd.consumers.size(), inv, rd.dat->name());
  }
  for (int i : p.write_args) {
    const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
    const std::string& tn = a.dat->set().name();
    const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(p.n_iter), max_items);
    for (std::size_t e = 0; e < n; ++e)
      o << fmt::format("  set_{}[{}].{}_arg{}_write_send -> set_{}[{}].{}_dat_{}_write_recv ({})\n", iter, e, inv, i,
                       tn, a.map(static_cast<int>(e), a.index), inv, a.dat->name(), to_string(a.access));
    o << fmt::format("  ({} write edges from {}_arg{}_write_send)\n", p.n_iter, inv, i);
  }
  o << fmt::format("  ({0} begin edges global.{1}_begin -> *.{1}_begin, {0} end edges *.{1}_end -> global.{1}_end)\n",
                   p.n_devices, inv);
}

}  // namespace

std::string MessageExecutor::dump(const ParLoopBase& loop, std::size_t max_items) {
  const Program& p = program(loop);
  std::ostringstream o;
  const std::string& inv = p.inv;
  o << fmt::format(
      "device graph of invocation '{}' (par_loop '{}' over set '{}'): {} devices, {} device types + global\n", inv,
      p.loop_name, p.slots[0].set.name(), p.n_devices, p.slots.size());
  o << "graph properties:\n";
  for (const auto& s : p.slots) o << fmt::format("  length_{} = {}\n", s.set.name(), s.set.size());
  for (const auto& a : p.args)
    if (!a.is_dat() && a.global->kind() == GlobalKind::Constant)
      o << fmt::format("  global_{} : {}[{}] = {}\n", a.global->name(), a.scalar, a.dim, a.global->value_string());

  o << "device type global (controller):\n  state:";
  bool any = false;
  for (const auto& a : p.args)
    if (!a.is_dat() && a.global->kind() == GlobalKind::Mutable) {
      o << fmt::format(" global::global_{} : {}[{}] ({})", a.global->name(), a.scalar, a.dim, to_string(a.access));
      any = true;
    }
  if (!any) o << " (none)";
  o << fmt::format("\n  output pins: {}_begin -> every device\n  input pins: {}_end <- every device\n", inv, inv);

  for (const auto& s : p.slots) dump_device_type(o, p, s);

  o << "devices:\n";
  for (const auto& s : p.slots) {
    const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(s.set.size()), max_items);
    for (std::size_t e = 0; e < n; ++e) {
      const std::size_t d = static_cast<std::size_t>(s.base) + e;
      o << fmt::format("  set_{}[{}]: {}_read_recv_total = {}, {}_write_recv_expected = {}\n", s.set.name(), e, inv,
                       p.read_recv_total[d], inv, p.write_recv_expected[d]);
    }
    if (static_cast<std::size_t>(s.set.size()) > n)
      o << fmt::format("  ... {} more set_{} devices\n", static_cast<std::size_t>(s.set.size()) - n, s.set.name());
  }

  dump_edges(o, p, max_items);
  return o.str();
}

}  // namespace korch::mesh
