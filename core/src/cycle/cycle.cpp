// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cycle.hpp"

#include "cycle_routines.hpp"
#include "declaration_check.hpp"
#include "cycle_wiring.hpp"
#include "node_team_names.hpp"
#include "pipeline_times.hpp"

#include <korch/backend/thread_spaces.hpp>
#include <korch/distributor.hpp>
#include <korch/excerpt.hpp>

#include <fmt/format.h>

namespace korch::detail {

Cycle::Cycle(CycleResources resources, const Bundle& bundle, const Configuration& configuration, DataSource& grid,
             BlockIterator* order)
    : r_(resources), bundle_(bundle), c_(configuration), grid_(grid), order_(order), nodes_(resources.scratch.nodes) {}

void Cycle::run(CycleResult& result) {
  validate();
  make_nodes();
  const NodeTeamNames names(nodes_, r_.scratch.pool_names);
  CycleWiring wiring(c_, nodes_, r_.scratch.links);
  connect_routers();
  record_begin();
  start();
  bool all_started = true;
  for (const CycleNode& n : nodes_) all_started = all_started && n.started;
  if (all_started) distribute(result);
  close_entries(wiring.entries());
  drain(result, wiring);
  observe_throughput(result);
  wiring.unwire(errors_);
  for (const auto& h : helpers_) result.transfers += h->transfers();
  helpers_.clear();
  check_pools();
  errors_.rethrow(c_.name);
}

void Cycle::validate() {
  if (!r_.validated.holds(c_, bundle_)) {
    korch::validate(c_, r_.shape, &bundle_);
    check_declarations(c_, bundle_);
    r_.validated.remember(c_, bundle_);
  }
  if (r_.pinned.outstanding_bytes() != 0 || r_.device.outstanding_bytes() != 0) {
    throw Error::format(
        "runtime: the pools hold {} pinned and {} device bytes from before this cycle: release the "
        "data packets you kept before calling execute()",
        r_.pinned.outstanding_bytes(), r_.device.outstanding_bytes());
  }
}

void Cycle::make_nodes() {
  nodes_.clear();
  for (std::size_t i = 0; i < c_.teams.size(); ++i) {
    CycleNode n;
    n.name = c_.teams[i].name;
    n.team = r_.teams[i].get();
    n.team_config = &c_.teams[i];
    nodes_.add(std::move(n));
  }
  for (std::size_t i = 0; i < c_.helpers.size(); ++i) {
    helpers_.push_back(std::make_unique<Helper>(c_.helpers[i], grid_, r_.pinned, r_.device));
    CycleNode n;
    n.name = c_.helpers[i].name;
    n.team = r_.helper_teams[i].get();
    n.helper = helpers_.back().get();
    nodes_.add(std::move(n));
  }
}

void Cycle::record_begin() {
  if (!r_.recorder) return;
  std::vector<RecordedTeamState> states;
  for (const auto& name : r_.validated.declared()) {
    const CycleNode& n = nodes_.at(name);
    const auto s = n.team->snapshot();
    states.push_back(RecordedTeamState{name, to_string(s.mode), s.n_max,
                                       n.team_config ? n.team_config->initial_threads : n.helper->config().threads});
  }
  r_.recorder->begin(c_.to_json(), std::move(states));
}

// Subscribers first, so that no item or thread reaches a team that has not started.
void Cycle::start() {
  for (auto it = wait_order().rbegin(); it != wait_order().rend(); ++it) {
    CycleNode& n = nodes_.at(*it);
    try {
      if (n.team_config) {
        const ActionRoutine* action = bundle_.find(n.team_config->action);
        n.team->start_cycle(task_routine(*action, n.name, r_.trace, r_.recorder), n.team_config->initial_threads,
                            bundle_.parameters());
      } else {
        n.team->start_cycle(helper_routine(n, r_.trace, r_.recorder), n.helper->config().threads, bundle_.parameters());
      }
      n.started = true;
    } catch (...) {
      errors_.add(fmt::format("starting '{}'", excerpt(n.name)), std::current_exception());
    }
  }
}

// The distributor this cycle feeds its entries with: the one kept from the last cycle where its
// targets push into the same teams for the same recorder (the configuration is the one validated),
// else a new one, kept for the next cycles.
Distributor& Cycle::distributor() {
  auto& kept = r_.validated.kept_distributor();
  if (kept.distributor && kept.recorder == r_.recorder) {
    bool same_entries = true;
    std::size_t k = 0;
    for (const auto& g : c_.distributor.groups)
      for (const auto& p : g.pipelines)
        same_entries = same_entries && k < kept.entries.size() && kept.entries[k++] == nodes_.at(p).team;
    if (same_entries && k == kept.entries.size()) {
      kept.distributor->restart_round_robin();
      return *kept.distributor;
    }
  }
  kept = ValidationMemo::KeptDistributor{};
  std::vector<std::vector<DistributorTarget>> targets;
  std::vector<ThreadTeam*> entries;
  for (const auto& g : c_.distributor.groups) {
    targets.emplace_back();
    for (const auto& p : g.pipelines) {
      const TeamConfig* tc = c_.find_team(p);
      const DataType type = tc ? tc->type : c_.find_helper(p)->input;
      entries.push_back(nodes_.at(p).team);
      targets.back().push_back(distributor_target(p, type, entries.back(), r_.recorder));
    }
  }
  auto made = std::make_unique<Distributor>(c_.distributor, std::move(targets));
  for (std::size_t g = 0; g < c_.distributor.groups.size(); ++g) {
    const auto learned = r_.validated.learned_throughput().find(group_entries(g));
    if (learned != r_.validated.learned_throughput().end()) made->resume(g, learned->second);
  }
  kept.entries = std::move(entries);
  kept.recorder = r_.recorder;
  kept.distributor = std::move(made);
  return *kept.distributor;
}

// On the calling thread: every block of the grid into the pipeline entries.
void Cycle::distribute(CycleResult& result) {
  distribution_started_ = std::chrono::steady_clock::now();
  try {
    const auto& counts = distributor().distribute(grid_, r_.trace, &r_.items, order_);
    for (std::size_t g = 0; g < counts.size(); ++g)
      for (std::size_t i = 0; i < counts[g].size(); ++i)
        result.distribution.emplace_back(c_.distributor.groups[g].pipelines[i], counts[g][i]);
  } catch (...) {
    errors_.add("the distributor", std::current_exception());
  }
}

// Each router enqueues into its two subscribers as an external publisher. Not recorded as pushes: a
// replay runs the router's routine, which makes the same choices in the recorded order.
void Cycle::connect_routers() {
  for (const auto& h : c_.helpers) {
    if (h.kind != HelperKind::router) continue;
    std::array<Helper::Push, 2> pushes;
    for (std::size_t i = 0; i < 2; ++i) {
      ThreadTeam* team = nodes_.at(h.to[i]).team;
      pushes[i] = [team](std::shared_ptr<DataItem> item) { team->enqueue(std::move(item)); };
    }
    nodes_.at(h.name).helper->route_to(std::move(pushes));
  }
}

// The distributor is done (or failed): it closes its side of every entry.
void Cycle::close_entries(const std::vector<ThreadTeam*>& entries) {
  for (auto* t : entries) {
    try {
      if (t->mode() == TeamMode::RunningOpen) t->close_queue();
    } catch (...) {
      errors_.add(fmt::format("closing '{}'", t->name()), std::current_exception());
    }
  }
}

// Publishers before subscribers: each team closes its subscriber's queue when it goes Idle, so
// waiting in this order releases every node in turn. A router's team has no work subscriber: once
// it is Idle (finished or failed), the cycle closes the router's side of both its subscribers.
void Cycle::drain(CycleResult& result, const CycleWiring& wiring) {
  for (const auto& name : wait_order()) {
    CycleNode& n = nodes_.at(name);
    if (n.started) {
      try {
        n.team->wait();
      } catch (...) {
        errors_.add("", std::current_exception());  // the team's error names it (NodeTeamNames)
      }
    }
    result.reports.push_back(NodeReport{name, n.team->last_cycle()});
    if (auto it = wiring.router_targets().find(name); it != wiring.router_targets().end()) close_entries(it->second);
  }
}

// A cycle that ran every item tells each throughput group how long its pipelines took; a failed
// cycle's times say nothing of the rates.
void Cycle::observe_throughput(const CycleResult& result) {
  if (errors_.any() || distribution_started_ == std::chrono::steady_clock::time_point{}) return;
  auto& kept = r_.validated.kept_distributor();
  if (!kept.distributor) return;
  for (std::size_t g = 0; g < c_.distributor.groups.size(); ++g) {
    const DistributorGroup& group = c_.distributor.groups[g];
    if (group.policy != DistributionPolicy::throughput) continue;
    kept.distributor->observe(g, pipeline_seconds(c_, group, result.reports, distribution_started_));
    r_.validated.learned_throughput()[group_entries(g)] = kept.distributor->learned(g);
  }
}

std::vector<const ThreadTeam*> Cycle::group_entries(std::size_t g) const {
  std::vector<const ThreadTeam*> entries;
  for (const auto& p : c_.distributor.groups[g].pipelines) entries.push_back(nodes_.at(p).team);
  return entries;
}

void Cycle::check_pools() {
  if (r_.pinned.outstanding_bytes() != 0 || r_.device.outstanding_bytes() != 0) {
    errors_.add("the memory pools",
                std::make_exception_ptr(Error::format(
                    "{} pinned and {} device bytes are still outstanding after the cycle: a data packet outlived the "
                    "cycle (kept by a routine?)",
                    r_.pinned.outstanding_bytes(), r_.device.outstanding_bytes())));
  }
}

}  // namespace korch::detail
