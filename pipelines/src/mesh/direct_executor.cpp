// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The direct executor's plan: greedy colouring of the iteration set so that elements of one colour
// share no target of an indirectly modified dat, plus reduction staging.
#include <korch/mesh/direct_executor.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace korch::mesh {

std::string DirectExecutor::name() const {
  return fmt::format("direct ({}, {}{})", DeviceExecSpace::name(),
                     options_.inc_mode == IncMode::Colouring ? "colouring" : "atomics",
                     sync_ && sync_->partition().size() > 1 ? ", on ranks" : "");
}

const DirectPlan& DirectExecutor::plan(const ParLoopBase& loop) {
  auto& slot = plans_[loop.uid()];
  if (slot) return *slot;
  if (sync_ && sync_->partition().size() > 1) {
    // A loop's share is the same on every run (the partition is fixed).
    slot = std::make_unique<DirectPlan>(
        make_direct_plan(loop, options_.inc_mode, sync_->elements(loop), sync_->partition().of(loop.set()).is_owned));
  } else {
    slot = std::make_unique<DirectPlan>(make_direct_plan(loop, options_.inc_mode));
  }
  return *slot;
}

void DirectExecutor::run(ParLoopBase& loop) {
  if (!sync_) {
    detail::refuse_stale_halos(name(), loop.name(), loop.args());
    loop.run_direct(plan(loop));
    return;
  }
  const RankLoop share = sync_->begin(loop);
  loop.run_direct(plan(loop));
  sync_->end(loop, share);
}

namespace {

// Where element `e` of the loop writes a dat through one argument (the element itself when `map`
// is null).
struct Target {
  const int* map;
  int arity, index;
  int of(int e) const { return map ? map[static_cast<std::size_t>(e) * arity + index] : e; }
};

// The targets through which a loop's arguments modify one dat, and the dat's size.
struct DatTargets {
  std::vector<Target> targets;
  int size = 0;
};

// A buffer of one value per element for each global the loop reduces into.
void stage_reductions(const ParLoopBase& loop, DirectPlan& plan) {
  const auto& args = loop.args();
  const int n = loop.set().size();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgInfo& a = args[i];
    if (a.kind != ArgInfo::Kind::Global || !modifies(a.access)) continue;
    plan.stage[i] = Kokkos::View<unsigned char*, DeviceMemSpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "korch::mesh::reduction " + a.global->name()),
        static_cast<std::size_t>(n) * a.element_bytes);
  }
}

// Which (map, index) pairs write which dat: conflicts are per dat. A direct INC of a dat that is
// also modified indirectly conflicts too (its target is the element itself, map == nullptr); such
// dats are coloured even in atomics mode (a direct INC is never staged). Marks the indirect INCs
// that atomics mode stages instead.
std::map<const void*, DatTargets> conflicting_targets(const ParLoopBase& loop, IncMode inc_mode, DirectPlan& plan) {
  const auto& args = loop.args();
  std::map<const void*, DatTargets> by_dat;
  std::map<const void*, bool> indirectly_modified, direct_inc;
  for (const ArgInfo& a : args) {
    if (!a.is_dat() || !modifies(a.access)) continue;
    if (a.indirect())
      indirectly_modified[a.dat.get()] = true;
    else if (a.access == Access::Inc)
      direct_inc[a.dat.get()] = true;
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgInfo& a = args[i];
    if (!a.is_dat() || !modifies(a.access)) continue;
    if (!a.indirect()) {
      if (a.access == Access::Inc && indirectly_modified.count(a.dat.get())) {
        by_dat[a.dat.get()].targets.push_back(Target{nullptr, 0, 0});
        by_dat[a.dat.get()].size = a.dat->set().size();
      }
      continue;
    }
    if (a.access == Access::Inc && inc_mode == IncMode::Atomics && !direct_inc.count(a.dat.get())) {
      plan.staged[i] = 1;
      continue;
    }
    by_dat[a.dat.get()].targets.push_back(Target{a.map.host_data(), a.map.arity(), a.index});
    by_dat[a.dat.get()].size = a.dat->set().size();
  }
  return by_dat;
}

// Greedy colouring in rounds of 64 colours, over `elements` in their order: an element takes the
// lowest colour none of its targets has seen in this round; elements that find all 64 taken wait
// for the next round.
struct Colouring {
  std::vector<int> colour;  // per position in the element list
  int n_colours = 0;
};
Colouring colour_elements(const std::vector<int>& elements, const std::map<const void*, DatTargets>& by_dat) {
  std::vector<std::vector<std::uint64_t>> masks;  // per dat: per target element
  std::vector<std::vector<Target>> groups;
  for (auto& [dat, dat_targets] : by_dat) {
    groups.push_back(dat_targets.targets);
    masks.emplace_back(static_cast<std::size_t>(dat_targets.size), 0);
  }
  const std::size_t n = elements.size();
  std::vector<int> colour(n, -1);
  std::size_t left = n;
  int base = 0, n_colours = 0;
  while (left > 0) {
    for (auto& m : masks) std::fill(m.begin(), m.end(), 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (colour[i] >= 0) continue;
      const int e = elements[i];
      std::uint64_t used = 0;
      for (std::size_t g = 0; g < groups.size(); ++g)
        for (const Target& t : groups[g]) used |= masks[g][static_cast<std::size_t>(t.of(e))];
      if (used == ~std::uint64_t{0}) continue;
      int c = 0;
      while (used & (std::uint64_t{1} << c)) ++c;
      colour[i] = base + c;
      n_colours = std::max(n_colours, base + c + 1);
      for (std::size_t g = 0; g < groups.size(); ++g)
        for (const Target& t : groups[g]) masks[g][static_cast<std::size_t>(t.of(e))] |= std::uint64_t{1} << c;
      --left;
    }
    base += 64;
  }
  return {colour, n_colours};
}

Kokkos::View<int*, DeviceMemSpace> device_copy(const std::vector<int>& values, const std::string& label) {
  Kokkos::View<int*, DeviceMemSpace> view(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), values.size());
  Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> src(values.data(),
                                                                                           values.size());
  Kokkos::deep_copy(view, src);
  return view;
}

// Elements sorted by colour, in list order within a colour.
void order_by_colour(const ParLoopBase& loop, const std::vector<int>& elements, const Colouring& colouring,
                     DirectPlan& plan) {
  const std::vector<int>& colour = colouring.colour;
  const int n_colours = colouring.n_colours;
  plan.natural_order = false;
  plan.colour_offsets.assign(static_cast<std::size_t>(n_colours) + 1, 0);
  for (const int c : colour) ++plan.colour_offsets[static_cast<std::size_t>(c) + 1];
  for (int c = 0; c < n_colours; ++c)
    plan.colour_offsets[static_cast<std::size_t>(c) + 1] += plan.colour_offsets[static_cast<std::size_t>(c)];
  std::vector<int> order(elements.size());
  std::vector<int> fill(plan.colour_offsets.begin(), plan.colour_offsets.end() - 1);
  for (std::size_t i = 0; i < elements.size(); ++i)
    order[static_cast<std::size_t>(fill[static_cast<std::size_t>(colour[i])]++)] = elements[i];
  plan.order = device_copy(order, "korch::mesh::order " + loop.name());
}

std::vector<int> every_element(const Set& set) {
  std::vector<int> all(static_cast<std::size_t>(set.size()));
  for (std::size_t e = 0; e < all.size(); ++e) all[e] = static_cast<int>(e);
  return all;
}

// The colours of the whole set, kept for `elements` only: a target then receives its increments in
// colour order whatever share of the set a rank executes (docs/mesh.md, "Ranks").
Colouring whole_set_colours_of(const ParLoopBase& loop, const std::vector<int>& elements,
                               const std::map<const void*, DatTargets>& by_dat) {
  const Colouring whole = colour_elements(every_element(loop.set()), by_dat);
  Colouring share{{}, whole.n_colours};
  share.colour.reserve(elements.size());
  for (const int e : elements) share.colour.push_back(whole.colour[static_cast<std::size_t>(e)]);
  return share;
}

// The plan over `elements`; `whole_set` when they are every element of the set in order.
DirectPlan build_plan(const ParLoopBase& loop, IncMode inc_mode, const std::vector<int>& elements, bool whole_set) {
  DirectPlan plan;
  plan.inc_mode = inc_mode;
  plan.staged.assign(loop.args().size(), 0);
  plan.stage.resize(loop.args().size());
  stage_reductions(loop, plan);
  const std::map<const void*, DatTargets> by_dat = conflicting_targets(loop, inc_mode, plan);
  if (!by_dat.empty()) {
    order_by_colour(loop, elements,
                    whole_set ? colour_elements(elements, by_dat) : whole_set_colours_of(loop, elements, by_dat), plan);
  } else if (whole_set) {
    plan.natural_order = true;
    plan.colour_offsets = {0, loop.set().size()};
  } else {
    plan.natural_order = false;
    plan.colour_offsets = {0, static_cast<int>(elements.size())};
    plan.order = device_copy(elements, "korch::mesh::order " + loop.name());
  }
  return plan;
}

}  // namespace

DirectPlan make_direct_plan(const ParLoopBase& loop, IncMode inc_mode) {
  return build_plan(loop, inc_mode, every_element(loop.set()), true);
}

DirectPlan make_direct_plan(const ParLoopBase& loop, IncMode inc_mode, const std::vector<int>& elements,
                            const std::vector<char>& is_owned) {
  DirectPlan plan = build_plan(loop, inc_mode, elements, false);
  std::vector<int> owned;
  for (const int e : elements)
    if (is_owned[static_cast<std::size_t>(e)]) owned.push_back(e);
  plan.reduce_whole_set = false;
  plan.reduced = device_copy(owned, "korch::mesh::reduced " + loop.name());
  return plan;
}

}  // namespace korch::mesh
