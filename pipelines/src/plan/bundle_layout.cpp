#include "bundle_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace korch::plan::detail {

namespace {

int root(std::vector<int>& parent, int i) {
  while (parent[static_cast<std::size_t>(i)] != i) i = parent[static_cast<std::size_t>(i)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(i)])];
  return i;
}

std::string joined(const std::vector<std::string>& actions) {
  std::string s;
  for (const auto& a : actions) s += (s.empty() ? "" : "+") + a;
  return s;
}

unsigned teams_of(const PlannedPipeline& p) {
  const unsigned per_stage = p.placement.placement == Placement::split ? 2u : 1u;
  return per_stage * static_cast<unsigned>(p.stages.size());
}

unsigned teams_of(const std::vector<PlannedPipeline>& pipelines) {
  unsigned n = 0;
  for (const auto& p : pipelines) n += teams_of(p);
  return n;
}

void merge_stages(PlannedPipeline& p, std::size_t i) {
  auto& a = p.stages[i].actions;
  const auto& b = p.stages[i + 1].actions;
  a.insert(a.end(), b.begin(), b.end());
  p.stages[i].routine = joined(a);
  p.stages.erase(p.stages.begin() + static_cast<std::ptrdiff_t>(i) + 1);
}

}  // namespace

std::optional<std::vector<PlannedPipeline>> lay_out(const KernelGraph& graph, const std::vector<int>& members,
                                                    const SchedulerOptions& options) {
  const auto& actions = graph.actions();
  std::vector<int> local(actions.size(), -1);
  for (std::size_t i = 0; i < members.size(); ++i) local[static_cast<std::size_t>(members[i])] = static_cast<int>(i);
  std::vector<int> parent(members.size());
  std::iota(parent.begin(), parent.end(), 0);
  for (int m : members) {
    for (int d : graph.into(m)) {
      const int from = local[static_cast<std::size_t>(graph.dependences()[static_cast<std::size_t>(d)].from)];
      if (from >= 0) parent[static_cast<std::size_t>(root(parent, from))] = root(parent, local[static_cast<std::size_t>(m)]);
    }
  }
  // Pipelines in the order of their first action; actions in program order (members are sorted).
  std::vector<PlannedPipeline> pipelines;
  std::vector<int> pipeline_of_root(members.size(), -1);
  std::vector<std::vector<const ActionDeclaration*>> declared;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int r = root(parent, static_cast<int>(i));
    if (pipeline_of_root[static_cast<std::size_t>(r)] < 0) {
      pipeline_of_root[static_cast<std::size_t>(r)] = static_cast<int>(pipelines.size());
      pipelines.emplace_back();
      declared.emplace_back();
    }
    const auto p = static_cast<std::size_t>(pipeline_of_root[static_cast<std::size_t>(r)]);
    const ActionDeclaration& a = actions[static_cast<std::size_t>(members[i])];
    pipelines[p].stages.push_back(Stage{{a.action}, a.action});
    declared[p].push_back(&a);
  }
  for (std::size_t p = 0; p < pipelines.size(); ++p) {
    const auto placed = options.cost.place(declared[p]);
    if (!placed) return std::nullopt;
    pipelines[p].placement = *placed;
    for (const ActionDeclaration* a : declared[p])
      if (a->data_type == DeclaredDataType::block) pipelines[p].host_type = DataType::block;
    if (options.fuse_short) {
      // A short action joins the action after it (or, last in its pipeline, the one before).
      for (std::size_t s = 0; s < pipelines[p].stages.size() && pipelines[p].stages.size() > 1;) {
        bool has_short = false;
        for (const auto& name : pipelines[p].stages[s].actions)
          has_short = has_short || graph.actions()[static_cast<std::size_t>(graph.find(name))].hints.short_running;
        if (!has_short) {
          ++s;
        } else if (s + 1 < pipelines[p].stages.size()) {
          merge_stages(pipelines[p], s);
          ++s;
        } else {
          merge_stages(pipelines[p], s - 1);
        }
      }
    }
  }
  auto stage_cost = [&](const PlannedPipeline& p, std::size_t s) {
    double c = 0;
    for (const auto& name : p.stages[s].actions)
      c += options.cost.host_cost(graph.actions()[static_cast<std::size_t>(graph.find(name))]);
    return c;
  };
  // Fuse the cheapest neighbours while the bundle needs more teams than the runtime has; then give
  // up splitting, the most teams first.
  while (teams_of(pipelines) > options.shape.n_teams) {
    double best = std::numeric_limits<double>::infinity();
    std::size_t bp = 0, bs = 0;
    for (std::size_t p = 0; p < pipelines.size(); ++p)
      for (std::size_t s = 0; s + 1 < pipelines[p].stages.size(); ++s) {
        const double c = stage_cost(pipelines[p], s) + stage_cost(pipelines[p], s + 1);
        if (c < best) {
          best = c;
          bp = p;
          bs = s;
        }
      }
    if (best < std::numeric_limits<double>::infinity()) {
      merge_stages(pipelines[bp], bs);
      continue;
    }
    bool unsplit = false;
    for (auto& p : pipelines) {
      if (p.placement.placement != Placement::split) continue;
      p.placement.placement = p.placement.host_cost <= p.placement.device_cost ? Placement::host : Placement::device;
      unsplit = true;
      break;
    }
    if (!unsplit) return std::nullopt;
  }
  return pipelines;
}

Configuration make_configuration(const std::string& name, std::vector<PlannedPipeline>& pipelines,
                                 const SchedulerOptions& options) {
  Configuration c;
  c.name = name;
  const unsigned threads = options.threads_per_stage > 0 ? std::min(options.threads_per_stage, options.shape.threads_per_team)
                                                         : options.shape.threads_per_team;
  bool any_split = false;
  for (std::size_t p = 0; p < pipelines.size(); ++p) {
    PlannedPipeline& pl = pipelines[p];
    pl.host_teams.clear();
    pl.device_teams.clear();
    const Placement where = pl.placement.placement;
    DistributorGroup group;
    auto chain = [&](const char* side, DataType type, std::vector<std::string>& names) {
      for (std::size_t s = 0; s < pl.stages.size(); ++s) {
        names.push_back(fmt::format("p{}_s{}_{}", p, s, side));
        c.teams.push_back(TeamConfig{names.back(), type, pl.stages[s].routine, threads});
        if (s > 0) c.work.push_back(Edge{names[s - 1], names[s]});
      }
      group.pipelines.push_back(names.front());
    };
    // Device teams get action metadata: the data of a device pipeline stays where the device keeps
    // it (the design's GPU-internal configuration), so no packet has to carry declared variables.
    if (where != Placement::device) chain("host", pl.host_type, pl.host_teams);
    if (where != Placement::host) chain("device", DataType::action_metadata, pl.device_teams);
    if (where == Placement::split) {
      any_split = true;
      group.weights = {pl.placement.host_weight, pl.placement.device_weight};
      group.policy = DistributionPolicy::fixed_fraction;
      group.unit = RoutingUnit::block;
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
