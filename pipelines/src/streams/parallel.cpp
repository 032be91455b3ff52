// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parallel executor's entry points: the static checks, and run_parallel, which runs one
// scheduler thread's trampoline on each of a team's threads. See parallel_internals.hpp for the rest.
#include "parallel_internals.hpp"

#include <korch/error.hpp>
#include <korch/thread_team.hpp>

#include <fmt/format.h>

namespace korch::streams {

namespace {

using detail::Channel;
using detail::Outcome;
using detail::Scheduler;

// The item a team thread takes to become scheduler thread `index`.
struct SchedulerThreadItem : DataItem {
  explicit SchedulerThreadItem(unsigned index_) : index(index_) {}
  unsigned index;
  std::string describe() const override { return fmt::format("stream scheduler thread {}", index); }
};

// Runs every scheduler thread's trampoline on `team` (or a team of its own when null) until the run ends.
void run_scheduler_threads(Scheduler& scheduler, const ParallelOptions& options, ThreadTeam* team) {
  std::unique_ptr<ThreadTeam> own;
  if (team == nullptr) {
    own = std::make_unique<ThreadTeam>("korch-streams", options.threads);
    team = own.get();
  } else if (team->n_max() < options.threads) {
    throw Error::format(
        "stream executor: team '{}' has {} threads but {} scheduler threads were asked for; "
        "use a team with n_max >= {} or fewer threads",
        team->name(), team->n_max(), options.threads, options.threads);
  }
  team->start_cycle(ActionRoutine("stream-trampoline",
                                  [&scheduler](const ActionContext&, DataItem& item) {
                                    scheduler.run_thread(static_cast<SchedulerThreadItem&>(item).index);
                                  }),
                    options.threads);
  for (unsigned i = 0; i < options.threads; ++i) team->enqueue(std::make_shared<SchedulerThreadItem>(i));
  team->close_queue();
  team->wait();
}

}  // namespace

void check_parallel(const Layout& layout, const ParallelOptions& options) {
  if (options.queue_capacity == 0) throw Error("stream executor: queue_capacity 0; give every queue at least 1 slot");
  if (options.idle_spin.count() < 0) {
    throw Error::format(
        "stream executor: idle_spin is {} us; give 0 (sleep at once) or more, "
        "or std::chrono::microseconds::max() to never sleep",
        options.idle_spin.count());
  }
  detail::check_unit(layout.root(), detail::needs_commit(layout.root()), "input", options);
}

ParallelResult run_parallel(const Comp& program, const std::vector<Item>& input, const ParallelOptions& options,
                            ThreadTeam* team, const Env& env) {
  Layout layout(program, options.threads);
  check_parallel(layout, options);
  ParallelResult result;
  result.warnings = layout.warnings();

  Scheduler scheduler(layout, options);
  if (options.timeout.count() > 0) scheduler.deadline = std::chrono::steady_clock::now() + options.timeout;
  const bool root_commit = detail::needs_commit(layout.root());
  Channel in("input", root_commit ? Channel::Commit : Channel::Spsc,
             root_commit ? detail::commit_capacity(options) : options.queue_capacity);
  Channel out("output", Channel::Sink, 0, &result.output);
  Outcome root;
  scheduler.spawn(0, detail::make_source_task(input, &in));
  scheduler.activate(layout.root(), &in, &out, env, [&](Outcome o) {
    root = o;
    in.consumer_done.store(true, std::memory_order_release);  // stop the source
    scheduler.set_root_done();
  });
  run_scheduler_threads(scheduler, options, team);
  if (auto e = scheduler.error()) std::rethrow_exception(e);

  if (root.kind == Outcome::Finished) result.value = root.value;
  result.starved = root.kind == Outcome::Starved;
  result.consumed = in.kind() == Channel::Commit ? in.commit_queue()->front() : in.ring()->popped();
  result.commits = {scheduler.commits.load(), scheduler.committed_items.load(), scheduler.rollbacks.load(),
                    scheduler.rolled_back_items.load()};
  result.tasks_run = scheduler.tasks_run();
  result.parks = scheduler.parks();
  result.busy_seconds = scheduler.busy_seconds;
  for (double s : scheduler.spin_seconds) result.spin_seconds += s;
  return result;
}

}  // namespace korch::streams
