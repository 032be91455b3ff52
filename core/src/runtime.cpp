#include <korch/backend/thread_spaces.hpp>
#include <korch/distributor.hpp>
#include <korch/error.hpp>
#include <korch/helper.hpp>
#include <korch/runtime.hpp>

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <set>

namespace korch {

namespace {
std::atomic<bool> runtime_exists{false};
}

bool Runtime::exists() noexcept { return runtime_exists.load(); }

Runtime::Runtime(RuntimeOptions options) : options_(options) {
  if (options_.n_teams < 1 || options_.threads_per_team < 1 || options_.n_helpers < 1 || options_.helper_threads < 1) {
    throw Error::format("runtime: options n_teams={}, threads_per_team={}, n_helpers={}, helper_threads={}: each must be "
                        "at least 1", options_.n_teams, options_.threads_per_team, options_.n_helpers,
                        options_.helper_threads);
  }
  bool expected = false;
  if (!runtime_exists.compare_exchange_strong(expected, true)) {
    throw Error("runtime: another korch::Runtime exists; there is one at a time: destroy the other one first");
  }
  try {
    for (unsigned i = 0; i < options_.n_teams; ++i) {
      teams_.push_back(std::make_unique<ThreadTeam>(fmt::format("team {}", i + 1), options_.threads_per_team,
                                                    options_.team_options));
    }
    for (unsigned i = 0; i < options_.n_helpers; ++i) {
      helpers_.push_back(std::make_unique<ThreadTeam>(fmt::format("helper {}", i + 1), options_.helper_threads,
                                                      options_.team_options));
    }
    pinned_ = std::make_unique<MemoryPool>("pinned host", PoolMemory::pinned_host, options_.pinned_pool_limit);
    device_ = std::make_unique<MemoryPool>("device", PoolMemory::device, options_.device_pool_limit);
  } catch (...) {
    teams_.clear();
    helpers_.clear();
    runtime_exists.store(false);
    throw;
  }
}

Runtime::~Runtime() {
  teams_.clear();
  helpers_.clear();
  pinned_.reset();
  device_.reset();
  runtime_exists.store(false);
}

RuntimeShape Runtime::shape() const noexcept {
  return RuntimeShape{options_.n_teams, options_.threads_per_team, options_.n_helpers, options_.helper_threads};
}

ThreadTeam& Runtime::team(unsigned i) {
  if (i >= teams_.size()) throw Error::format("runtime: team {} does not exist: there are {}", i, teams_.size());
  return *teams_[i];
}
ThreadTeam& Runtime::helper_team(unsigned i) {
  if (i >= helpers_.size()) throw Error::format("runtime: helper team {} does not exist: there are {}", i, helpers_.size());
  return *helpers_[i];
}

namespace {

struct RtNode {
  std::string name;
  ThreadTeam* team = nullptr;
  const TeamConfig* team_config = nullptr;
  Helper* helper = nullptr;
  ThreadTeam* external_target = nullptr;  // emits new items into this team (and closes it)
  bool started = false;
};

class Errors {
 public:
  void add(const std::string& where, std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!first_) {
      first_ = e;
      where_ = where;
    }
    ++count_;
  }
  void rethrow(const std::string& configuration) {
    if (!first_) return;
    std::string what;
    try {
      std::rethrow_exception(first_);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "unknown exception";
    }
    const std::string message =
        count_ > 1 ? fmt::format("runtime: execution cycle of configuration '{}' failed in {}: {} ({} more errors)",
                                 configuration, where_, what, count_ - 1)
                   : fmt::format("runtime: execution cycle of configuration '{}' failed in {}: {}", configuration,
                                 where_, what);
    try {
      std::rethrow_exception(first_);
    } catch (...) {
      std::throw_with_nested(Error(message));
    }
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
  std::string where_;
  std::size_t count_ = 0;
};

}  // namespace

namespace {
// The runtime whose cycle the calling thread is running (re-entry from the same thread).
thread_local const Runtime* cycle_of_this_thread = nullptr;
}  // namespace

bool Runtime::owns_team_thread(const ThreadTeam* team) const noexcept {
  if (!team) return false;
  for (const auto& t : teams_)
    if (t.get() == team) return true;
  for (const auto& t : helpers_)
    if (t.get() == team) return true;
  return false;
}

void Runtime::execute(const Bundle& bundle, const Configuration& c, Grid& grid) {
  if (const ThreadTeam* team = ThreadTeam::current(); owns_team_thread(team)) {
    throw Error::format("runtime: execute('{}') called from a thread of team '{}' of this runtime (from an action "
                        "routine?) while its cycle runs: that cycle waits for this thread, so the call could never "
                        "start; run the next cycle from the caller after execute() returns", c.name, team->name());
  }
  if (cycle_of_this_thread == this) {
    throw Error::format("runtime: execute('{}') called again on the thread that runs this runtime's cycle: "
                        "cycles do not nest; call it after the running execute() returns", c.name);
  }
  std::lock_guard<std::mutex> turn(cycle_mutex_);
  cycle_of_this_thread = this;
  struct Clear {
    ~Clear() { cycle_of_this_thread = nullptr; }
  } clear;
  execute_cycle(bundle, c, grid);
}

void Runtime::execute_cycle(const Bundle& bundle, const Configuration& c, Grid& grid) {
  validate(c, shape(), &bundle);
  reports_.clear();
  distribution_.clear();
  if (pinned_->outstanding_bytes() != 0 || device_->outstanding_bytes() != 0) {
    throw Error::format("runtime: the pools hold {} pinned and {} device bytes from before this cycle: release the "
                        "data packets you kept before calling execute()", pinned_->outstanding_bytes(),
                        device_->outstanding_bytes());
  }

  // ---- nodes ----
  std::map<std::string, RtNode> nodes;
  std::vector<std::string> order_decl;
  for (std::size_t i = 0; i < c.teams.size(); ++i) {
    RtNode n;
    n.name = c.teams[i].name;
    n.team = teams_[i].get();
    n.team_config = &c.teams[i];
    nodes[n.name] = n;
    order_decl.push_back(n.name);
  }
  std::vector<std::unique_ptr<Helper>> helpers;
  for (std::size_t i = 0; i < c.helpers.size(); ++i) {
    helpers.push_back(std::make_unique<Helper>(c.helpers[i], grid, *pinned_, *device_));
    RtNode n;
    n.name = c.helpers[i].name;
    n.team = helpers_[i].get();
    n.helper = helpers.back().get();
    nodes[n.name] = n;
    order_decl.push_back(n.name);
  }

  // ---- wait order: publishers (work and thread) before subscribers ----
  std::map<std::string, std::set<std::string>> preds;
  for (const auto& e : c.work) preds[e.to].insert(e.from);
  for (const auto& e : c.threads) preds[e.to].insert(e.from);
  std::vector<std::string> order;
  {
    std::set<std::string> done;
    bool progress = true;
    while (order.size() < order_decl.size() && progress) {
      progress = false;
      for (const auto& n : order_decl) {
        if (done.count(n)) continue;
        bool ready = true;
        for (const auto& p : preds[n]) ready = ready && done.count(p);
        if (ready) {
          order.push_back(n);
          done.insert(n);
          progress = true;
        }
      }
    }
    if (order.size() < order_decl.size()) {
      // A thread edge against the work direction: fall back to the work order alone.
      order.clear();
      preds.clear();
      for (const auto& e : c.work) preds[e.to].insert(e.from);
      std::set<std::string> d2;
      while (order.size() < order_decl.size()) {
        for (const auto& n : order_decl) {
          if (d2.count(n)) continue;
          bool ready = true;
          for (const auto& p : preds[n]) ready = ready && d2.count(p);
          if (ready) {
            order.push_back(n);
            d2.insert(n);
          }
        }
      }
    }
  }

  // ---- links (undone in `unlink` whatever happens) ----
  std::vector<ThreadTeam*> work_links, thread_links, external_links;
  auto unlink = [&]() noexcept {
    for (auto* t : work_links) {
      try { t->detach_work_subscriber(); } catch (...) {}
    }
    for (auto* t : thread_links) {
      try { t->detach_thread_subscriber(); } catch (...) {}
    }
    for (auto* t : external_links) {
      try { t->remove_external_work_publisher(); } catch (...) {}
    }
  };
  std::vector<ThreadTeam*> roots;
  try {
    for (const auto& e : c.work) {
      RtNode& a = nodes.at(e.from);
      RtNode& b = nodes.at(e.to);
      if (!a.helper || Helper::passes_item_through(a.helper->config().kind)) {
        a.team->attach_work_subscriber(*b.team);
        work_links.push_back(a.team);
      } else {
        b.team->add_external_work_publisher();
        external_links.push_back(b.team);
        a.external_target = b.team;
      }
    }
    for (const auto& g : c.distributor.groups) {
      for (const auto& p : g.pipelines) {
        ThreadTeam* t = nodes.at(p).team;
        t->add_external_work_publisher();
        external_links.push_back(t);
        roots.push_back(t);
      }
    }
    for (const auto& e : c.threads) {
      nodes.at(e.from).team->attach_thread_subscriber(*nodes.at(e.to).team);
      thread_links.push_back(nodes.at(e.from).team);
    }
  } catch (...) {
    unlink();
    throw;
  }

  Errors errors;
  Trace* trace = trace_;
  Recorder* recorder = recorder_;
  if (recorder) {
    std::vector<RecordedTeamState> states;
    for (const auto& n : order_decl) {
      const auto& rn = nodes.at(n);
      const auto s = rn.team->snapshot();
      states.push_back(RecordedTeamState{n, to_string(s.mode), s.n_max,
                                         rn.team_config ? rn.team_config->initial_threads : rn.helper->config().threads});
    }
    recorder->begin(c.to_json(), std::move(states));
  }

  // ---- start: subscribers first ----
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    RtNode& n = nodes.at(*it);
    try {
      if (n.team_config) {
        const ActionRoutine* r = bundle.find(n.team_config->action);
        ActionRoutine routine = *r;
        if (trace || recorder) {
          routine = ActionRoutine(r->name(), [r, trace, recorder, name = n.name](const ActionContext& ctx, DataItem& item) {
            if (recorder) recorder->task(name, item, ctx.thread_index());
            TraceScope s(trace, r->name().c_str(), "task", name, ctx.thread_index(), trace ? item.describe() : std::string());
            (*r)(ctx, item);
          });
        }
        n.team->start_cycle(std::move(routine), n.team_config->initial_threads, bundle.parameters());
      } else {
        ThreadTeam* target = n.external_target;
        Emit emit = [target](std::shared_ptr<DataItem> item) {
          if (target) target->enqueue(std::move(item));
        };
        ActionRoutine routine = n.helper->routine(emit, trace);
        if (recorder) {
          routine = ActionRoutine(n.name, [inner = std::move(routine), recorder, name = n.name](const ActionContext& ctx, DataItem& item) {
            recorder->task(name, item, ctx.thread_index());
            inner(ctx, item);
          });
        }
        n.team->start_cycle(std::move(routine), n.helper->config().threads, bundle.parameters());
      }
      n.started = true;
    } catch (...) {
      errors.add(fmt::format("starting '{}'", n.name), std::current_exception());
    }
  }

  // ---- distribute (calling thread), then close the entries ----
  bool all_started = true;
  for (const auto& [name, n] : nodes) all_started = all_started && n.started;
  if (all_started) {
    try {
      std::vector<std::vector<DistributorTarget>> targets;
      for (const auto& g : c.distributor.groups) {
        targets.emplace_back();
        for (const auto& p : g.pipelines) {
          ThreadTeam* t = nodes.at(p).team;
          const TeamConfig* tc = c.find_team(p);
          const DataType type = tc ? tc->type : c.find_helper(p)->input;
          targets.back().push_back(DistributorTarget{
              p, type,
              [t, recorder, p](std::shared_ptr<DataItem> item) {
                if (recorder) recorder->push(p, *item);
                t->enqueue(std::move(item));
              },
              [t]() { return t->snapshot().n_queued; },
              [t, recorder, p](std::vector<std::shared_ptr<DataItem>> items) {
                if (recorder)
                  for (const auto& item : items) recorder->push(p, *item);
                t->enqueue(std::move(items));
              }});
        }
      }
      Distributor distributor(c.distributor, std::move(targets));
      const auto counts = distributor.distribute(grid, trace, &items_);
      for (std::size_t g = 0; g < counts.size(); ++g)
        for (std::size_t i = 0; i < counts[g].size(); ++i)
          distribution_.emplace_back(c.distributor.groups[g].pipelines[i], counts[g][i]);
    } catch (...) {
      errors.add("the distributor", std::current_exception());
    }
  }
  for (auto* t : roots) {
    try {
      if (t->mode() == TeamMode::RunningOpen) t->close_queue();
    } catch (...) {
      errors.add(fmt::format("closing '{}'", t->name()), std::current_exception());
    }
  }

  // ---- wind down: publishers before subscribers ----
  const DeviceTaskSpace flush_instance{};
  for (const auto& name : order) {
    RtNode& n = nodes.at(name);
    if (n.started) {
      try {
        n.team->wait();
      } catch (...) {
        errors.add(fmt::format("'{}'", name), std::current_exception());
      }
    }
    if (n.helper) {
      try {
        ThreadTeam* target = n.external_target;
        n.helper->flush(flush_instance, [target](std::shared_ptr<DataItem> item) {
          if (target) target->enqueue(std::move(item));
        });
      } catch (...) {
        errors.add(fmt::format("helper '{}' at the end of the cycle", name), std::current_exception());
      }
    }
    if (n.external_target) {
      try {
        if (n.external_target->mode() == TeamMode::RunningOpen) n.external_target->close_queue();
      } catch (...) {
        errors.add(fmt::format("closing the subscriber of '{}'", name), std::current_exception());
      }
    }
    reports_.push_back(NodeReport{name, n.team->last_cycle()});
  }
  unlink();
  helpers.clear();

  if (pinned_->outstanding_bytes() != 0 || device_->outstanding_bytes() != 0) {
    errors.add("the memory pools",
               std::make_exception_ptr(Error::format(
                   "{} pinned and {} device bytes are still outstanding after the cycle: a data packet outlived the "
                   "cycle (kept by a routine?)", pinned_->outstanding_bytes(), device_->outstanding_bytes())));
  }
  errors.rethrow(c.name);
}

}  // namespace korch
