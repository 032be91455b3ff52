// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "bundle_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace korch::plan::detail {

namespace {

int root(std::vector<int>& parent, int i) {
  while (parent[static_cast<std::size_t>(i)] != i)
    i = parent[static_cast<std::size_t>(i)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(i)])];
  return i;
}

std::string joined(const std::vector<std::string>& actions) {
  std::string s;
  for (const auto& a : actions) s += (s.empty() ? "" : "+") + a;
  return s;
}

unsigned teams_of(const PlannedPipeline& p) {
  unsigned n = 0;
  for (const auto& s : p.stages) n += s.placement == Placement::split ? 2u : 1u;
  return n;
}

unsigned teams_of(const std::vector<PlannedPipeline>& pipelines) {
  unsigned n = 0;
  for (const auto& p : pipelines) n += teams_of(p);
  return n;
}

// Where a pipeline's parts begin: host stages [0, split), split stages [split, device), device
// stages [device, end) (docs/planner.md, "Cost model").
struct Parts {
  std::size_t split = 0, device = 0, end = 0;
};

Parts parts_of(const PlannedPipeline& p) {
  Parts r;
  r.end = p.stages.size();
  while (r.split < r.end && p.stages[r.split].placement == Placement::host) ++r.split;
  r.device = r.split;
  while (r.device < r.end && p.stages[r.device].placement == Placement::split) ++r.device;
  return r;
}

// The helpers a pipeline needs (docs/planner.md, "Configurations"): a router where a split follows
// host stages, and an aggregator to action metadata wherever host items go on to a device team.
unsigned helpers_of(const PlannedPipeline& p) {
  const Parts r = parts_of(p);
  const bool host = r.split > 0, split = r.device > r.split, device = r.device < r.end;
  unsigned n = 0;
  if (host && split) n += 2;              // the router and the aggregator in front of the split's device team
  if ((host || split) && device) n += 1;  // the aggregator in front of the device stages
  return n;
}

unsigned helpers_of(const std::vector<PlannedPipeline>& pipelines) {
  unsigned n = 0;
  for (const auto& p : pipelines) n += helpers_of(p);
  return n;
}

void merge_stages(PlannedPipeline& p, std::size_t i) {
  auto& a = p.stages[i].actions;
  const auto& b = p.stages[i + 1].actions;
  a.insert(a.end(), b.begin(), b.end());
  p.stages[i].routine = joined(a);
  p.stages.erase(p.stages.begin() + static_cast<std::ptrdiff_t>(i) + 1);
}

// Stages on different sides are never fused: one team runs a stage.
bool fusible(const PlannedPipeline& p, std::size_t i) { return p.stages[i].placement == p.stages[i + 1].placement; }

}  // namespace

namespace {

// A bundle's pipelines while they are laid out, with each pipeline's declarations in stage order.
struct Layout {
  std::vector<PlannedPipeline> pipelines;
  std::vector<std::vector<const ActionDeclaration*>> declared;
};

// The members joined by dependences form one pipeline each (union-find), in the order of their
// first action; actions in program order (members are sorted), one host stage each.
Layout group_pipelines(const KernelGraph& graph, const std::vector<int>& members) {
  const auto& actions = graph.actions();
  std::vector<int> local(actions.size(), -1);
  for (std::size_t i = 0; i < members.size(); ++i) local[static_cast<std::size_t>(members[i])] = static_cast<int>(i);
  std::vector<int> parent(members.size());
  std::iota(parent.begin(), parent.end(), 0);
  for (int m : members) {
    for (int d : graph.into(m)) {
      const int from = local[static_cast<std::size_t>(graph.dependences()[static_cast<std::size_t>(d)].from)];
      if (from >= 0)
        parent[static_cast<std::size_t>(root(parent, from))] = root(parent, local[static_cast<std::size_t>(m)]);
    }
  }
  Layout layout;
  std::vector<int> pipeline_of_root(members.size(), -1);
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int r = root(parent, static_cast<int>(i));
    if (pipeline_of_root[static_cast<std::size_t>(r)] < 0) {
      pipeline_of_root[static_cast<std::size_t>(r)] = static_cast<int>(layout.pipelines.size());
      layout.pipelines.emplace_back();
      layout.declared.emplace_back();
    }
    const auto p = static_cast<std::size_t>(pipeline_of_root[static_cast<std::size_t>(r)]);
    const ActionDeclaration& a = actions[static_cast<std::size_t>(members[i])];
    layout.pipelines[p].stages.push_back(Stage{{a.action}, a.action, Placement::host});
    layout.declared[p].push_back(&a);
  }
  return layout;
}

// A short action joins the action after it (or, last in its part, the one before) on its side.
void fuse_short_actions(const KernelGraph& graph, PlannedPipeline& pipeline) {
  for (std::size_t s = 0; s < pipeline.stages.size() && pipeline.stages.size() > 1;) {
    bool has_short = false;
    for (const auto& name : pipeline.stages[s].actions)
      has_short = has_short || graph.actions()[static_cast<std::size_t>(graph.find(name))].hints.short_running;
    if (has_short && s + 1 < pipeline.stages.size() && fusible(pipeline, s)) {
      merge_stages(pipeline, s);
      ++s;
    } else if (has_short && s > 0 && fusible(pipeline, s - 1)) {
      merge_stages(pipeline, s - 1);
    } else {
      ++s;
    }
  }
}

// Places each pipeline's actions by the cost model; false when one cannot be placed.
bool place_pipelines(const KernelGraph& graph, Layout& layout, const SchedulerOptions& options) {
  for (std::size_t p = 0; p < layout.pipelines.size(); ++p) {
    PlannedPipeline& pipeline = layout.pipelines[p];
    const auto placed = options.cost.place(layout.declared[p]);
    if (!placed) return false;
    pipeline.placement = *placed;
    for (std::size_t s = 0; s < pipeline.stages.size(); ++s) pipeline.stages[s].placement = placed->actions[s];
    for (const ActionDeclaration* a : layout.declared[p])
      if (a->data_type == DeclaredDataType::block) pipeline.host_type = DataType::block;
    if (options.fuse_short) fuse_short_actions(graph, pipeline);
  }
  return true;
}

// Gives up one pipeline's split: its split stages go to the side where they cost less (which may
// let them fuse with their neighbours). False when no pipeline has a split.
bool give_up_a_split(const KernelGraph& graph, Layout& layout, const SchedulerOptions& options) {
  for (std::size_t p = 0; p < layout.pipelines.size(); ++p) {
    PlannedPipeline& pl = layout.pipelines[p];
    const Parts r = parts_of(pl);
    if (r.device == r.split) continue;
    double h = 0, d = 0;
    for (std::size_t s = r.split; s < r.device; ++s)
      for (const auto& name : pl.stages[s].actions) {
        const ActionDeclaration& a = graph.actions()[static_cast<std::size_t>(graph.find(name))];
        h += options.cost.host_cost(a);
        d += options.cost.device_cost(a);
      }
    const Placement side = h <= d ? Placement::host : Placement::device;
    for (std::size_t s = r.split; s < r.device; ++s) pl.stages[s].placement = side;
    for (std::size_t k = 0; k < layout.declared[p].size(); ++k)
      if (pl.placement.actions[k] == Placement::split) pl.placement.actions[k] = side;
    options.cost.summarize(pl.placement, layout.declared[p]);
    return true;
  }
  return false;
}

// While the bundle needs more teams than the runtime has, fuse the cheapest neighbours on one
// side; when none are left, or it needs more helpers than the runtime has, give up a split.
// False when the bundle cannot be made to fit.
bool fit_to_runtime(const KernelGraph& graph, Layout& layout, const SchedulerOptions& options) {
  auto& pipelines = layout.pipelines;
  // Each stage's host cost, its actions summed in order; kept per stage and summed again only for
  // a stage a fusion changes, so a long pipeline is not looked up action by action on every pass.
  auto stage_cost = [&](const PlannedPipeline& p, std::size_t s) {
    double c = 0;
    for (const auto& name : p.stages[s].actions)
      c += options.cost.host_cost(graph.actions()[static_cast<std::size_t>(graph.find(name))]);
    return c;
  };
  std::vector<std::vector<double>> stage_costs(pipelines.size());
  for (std::size_t p = 0; p < pipelines.size(); ++p)
    for (std::size_t s = 0; s < pipelines[p].stages.size(); ++s) stage_costs[p].push_back(stage_cost(pipelines[p], s));
  while (teams_of(pipelines) > options.shape.n_teams || helpers_of(pipelines) > options.shape.n_helpers) {
    double best = std::numeric_limits<double>::infinity();
    std::size_t bp = 0, bs = 0;
    if (teams_of(pipelines) > options.shape.n_teams) {
      for (std::size_t p = 0; p < pipelines.size(); ++p)
        for (std::size_t s = 0; s + 1 < pipelines[p].stages.size(); ++s) {
          const double c = stage_costs[p][s] + stage_costs[p][s + 1];
          if (fusible(pipelines[p], s) && c < best) {
            best = c;
            bp = p;
            bs = s;
          }
        }
    }
    if (best < std::numeric_limits<double>::infinity()) {
      merge_stages(pipelines[bp], bs);
      stage_costs[bp].erase(stage_costs[bp].begin() + static_cast<std::ptrdiff_t>(bs) + 1);
      stage_costs[bp][bs] = stage_cost(pipelines[bp], bs);
      continue;
    }
    if (!give_up_a_split(graph, layout, options)) return false;
  }
  return true;
}

}  // namespace

std::optional<std::vector<PlannedPipeline>> lay_out(const KernelGraph& graph, const std::vector<int>& members,
                                                    const SchedulerOptions& options) {
  Layout layout = group_pipelines(graph, members);
  if (!place_pipelines(graph, layout, options) || !fit_to_runtime(graph, layout, options)) return std::nullopt;
  return std::move(layout.pipelines);
}

namespace {

// Host teams carry tiles (or blocks); device teams action metadata: the data of a device stage
// stays where the device keeps it (the design's GPU-internal configuration), so no packet has to
// carry declared variables.
std::string add_team(Configuration& c, PlannedPipeline& pl, std::size_t p, std::size_t s, bool device,
                     unsigned threads) {
  auto& names = device ? pl.device_teams : pl.host_teams;
  names[s] = fmt::format("p{}_s{}_{}", p, s, device ? "device" : "host");
  c.teams.push_back(
      TeamConfig{names[s], device ? DataType::action_metadata : pl.host_type, pl.stages[s].routine, threads});
  return names[s];
}

// The aggregator that turns the pipeline's host items into action metadata before stage s.
std::string add_to_metadata(Configuration& c, const PlannedPipeline& pl, std::size_t p, std::size_t s) {
  HelperConfig h;
  h.name = fmt::format("p{}_s{}_to_device", p, s);
  h.kind = HelperKind::aggregator;
  h.input = pl.host_type;
  h.output = DataType::action_metadata;
  c.helpers.push_back(h);
  return h.name;
}

// The teams of every stage (host before the split, both sides in it, device after) and the work
// edges between consecutive stages on each side.
void add_stage_teams(Configuration& c, PlannedPipeline& pl, std::size_t p, const Parts& r, unsigned threads) {
  const std::size_t n = pl.stages.size();
  pl.host_teams.assign(r.device > 0 ? n : 0, "");
  pl.device_teams.assign(r.split < n ? n : 0, "");
  for (std::size_t s = 0; s < r.split; ++s) {
    add_team(c, pl, p, s, false, threads);
    if (s > 0) c.work.push_back(Edge{pl.host_teams[s - 1], pl.host_teams[s]});
  }
  for (std::size_t s = r.split; s < r.device; ++s) {
    add_team(c, pl, p, s, false, threads);
    add_team(c, pl, p, s, true, threads);
    if (s > r.split) {
      c.work.push_back(Edge{pl.host_teams[s - 1], pl.host_teams[s]});
      c.work.push_back(Edge{pl.device_teams[s - 1], pl.device_teams[s]});
    }
  }
  for (std::size_t s = r.device; s < n; ++s) {
    add_team(c, pl, p, s, true, threads);
    if (s > r.device) c.work.push_back(Edge{pl.device_teams[s - 1], pl.device_teams[s]});
  }
}

// The distributor's group for the pipeline's entry: one team, both sides of a split at the start
// (sharing the blocks), or the host team with a router after the host stages for a split in the
// middle (docs/data-packets.md, "Routers"). Sets `split_at_start` for the distributor's kind.
DistributorGroup entry_group(Configuration& c, const PlannedPipeline& pl, std::size_t p, const Parts& r,
                             bool& split_at_start) {
  DistributorGroup group;
  if (r.split == r.device) {
    group.pipelines.push_back(r.split > 0 ? pl.host_teams[0] : pl.device_teams[0]);
    return group;
  }
  if (r.split == 0) {
    split_at_start = true;
    group.pipelines = {pl.host_teams[0], pl.device_teams[0]};
    group.weights = {pl.placement.host_weight, pl.placement.device_weight};
    group.policy = DistributionPolicy::fixed_fraction;
    group.unit = RoutingUnit::block;
    return group;
  }
  group.pipelines.push_back(pl.host_teams[0]);
  HelperConfig router;
  router.name = fmt::format("p{}_s{}_router", p, r.split);
  router.kind = HelperKind::router;
  router.input = router.output = pl.host_type;
  router.fraction = pl.placement.host_weight / (pl.placement.host_weight + pl.placement.device_weight);
  router.unit = RoutingUnit::block;
  c.work.push_back(Edge{pl.host_teams[r.split - 1], router.name});
  router.to = {pl.host_teams[r.split], add_to_metadata(c, pl, p, r.split)};
  c.work.push_back(Edge{router.to[1], pl.device_teams[r.split]});
  c.helpers.push_back(router);
  return group;
}

}  // namespace

Configuration make_configuration(const std::string& name, std::vector<PlannedPipeline>& pipelines,
                                 const SchedulerOptions& options) {
  Configuration c;
  c.name = name;
  const unsigned threads = options.threads_per_stage > 0
                               ? std::min(options.threads_per_stage, options.shape.threads_per_team)
                               : options.shape.threads_per_team;
  bool any_split = false;
  for (std::size_t p = 0; p < pipelines.size(); ++p) {
    PlannedPipeline& pl = pipelines[p];
    const Parts r = parts_of(pl);
    add_stage_teams(c, pl, p, r, threads);
    DistributorGroup group = entry_group(c, pl, p, r, any_split);
    if (r.device < pl.stages.size() && r.device > 0) {
      // Host items become action metadata before the device stages; a split's device branch joins directly.
      const std::string aggregator = add_to_metadata(c, pl, p, r.device);
      c.work.push_back(Edge{pl.host_teams[r.device - 1], aggregator});
      c.work.push_back(Edge{aggregator, pl.device_teams[r.device]});
      if (r.device > r.split) c.work.push_back(Edge{pl.device_teams[r.device - 1], pl.device_teams[r.device]});
    }
    c.distributor.groups.push_back(std::move(group));
  }
  if (c.distributor.groups.size() == 1) {
    c.distributor.kind = any_split ? DistributorKind::data_parallel : DistributorKind::action_parallel;
  } else {
    c.distributor.kind = any_split ? DistributorKind::hybrid : DistributorKind::action_parallel;
  }
  return c;
}

}  // namespace korch::plan::detail
