// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parallel executor's tasks: activating a layout unit (pipelines with their commit roles,
// bind, loops, conditionals), the leaf task that runs one stage's instance, and the input source.
#include "parallel_internals.hpp"

#include <korch/error.hpp>

#include <fmt/format.h>

namespace korch::streams::detail {

namespace {

// One activation of a pipeline (a single task counts as a one-stage pipeline).
struct PipelineRun {
  Scheduler& scheduler;
  const Unit& owner;
  std::vector<const Unit*> stages;
  int computer_stage;
  Channel* in;
  Channel* out;
  Callback done;
  std::vector<std::unique_ptr<Channel>> inner;  // inner[i]: stage i -> stage i+1
  std::atomic<int> remaining{0};
  Outcome computer_outcome;
  // The commit role on `in` when it is a commit queue.
  CommitQueue<Item>* commit_queue = nullptr;
  int committer = -1;
  Cards cards;
  std::uint64_t committed = 0;  // written by the committer task, then by complete()
  std::uint64_t final_takes = 0;

  PipelineRun(Scheduler& scheduler_, const Unit& owner_, std::vector<const Unit*> stages_, int computer_stage_,
              Channel* in_, Channel* out_, Callback done_)
      : scheduler(scheduler_),
        owner(owner_),
        stages(std::move(stages_)),
        computer_stage(computer_stage_),
        in(in_),
        out(out_),
        done(std::move(done_)) {}

  Channel* in_of(std::size_t i) { return i == 0 ? in : inner[i - 1].get(); }
  Channel* out_of(std::size_t i) { return i + 1 == stages.size() ? out : inner[i].get(); }

  void commit_up_to(std::uint64_t takes_so_far) {
    const std::uint64_t target = takes(cards, takes_so_far);
    if (target > committed) {
      commit_queue->commit(target - committed);
      scheduler.commits.fetch_add(1, std::memory_order_relaxed);
      scheduler.committed_items.fetch_add(target - committed, std::memory_order_relaxed);
      committed = target;
    }
  }
  // Batched commits: only when the producer is stuck on a full queue.
  // Returns true when it committed (which frees space the writer may be waiting for).
  bool maybe_commit(std::uint64_t takes_so_far) {
    if (!commit_queue->full()) return false;
    const std::uint64_t before = committed;
    commit_up_to(takes_so_far);
    return committed != before;
  }

  void stage_terminated(std::size_t i, Outcome outcome) {
    const bool first = i == 0, last = i + 1 == stages.size();
    if (outcome.kind == Outcome::Finished || outcome.kind == Outcome::Stopped) {
      if (!first) in_of(i)->consumer_done.store(true, std::memory_order_release);
    }
    if (outcome.kind == Outcome::Finished || outcome.kind == Outcome::Starved) {
      if (!last) out_of(i)->producer_done.store(true, std::memory_order_release);
    }
    if (static_cast<int>(i) == computer_stage) computer_outcome = outcome;
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) complete();
  }

  void complete() {
    Outcome outcome;
    if (computer_stage >= 0) {
      outcome = computer_outcome;
    } else {
      outcome.kind = out->consumer_done.load(std::memory_order_acquire) ? Outcome::Stopped : Outcome::Starved;
    }
    if (commit_queue != nullptr && committer >= 0) {
      commit_up_to(final_takes);
      if (outcome.kind != Outcome::Starved) {
        const std::uint64_t undo = commit_queue->uncommitted();
        commit_queue->rollback();
        scheduler.rollbacks.fetch_add(1, std::memory_order_relaxed);
        scheduler.rolled_back_items.fetch_add(undo, std::memory_order_relaxed);
      }
    }
    Callback d = std::move(done);
    d(outcome);
  }
};

// Runs one stage's instance: ticks it, or feeds it one input when it asked for one.
class LeafTask final : public Task {
 public:
  LeafTask(std::shared_ptr<PipelineRun> run, std::size_t stage, std::unique_ptr<Instance> instance)
      : run_(std::move(run)),
        stage_(stage),
        instance_(std::move(instance)),
        in_(run_->in_of(stage)),
        out_(run_->out_of(stage)),
        committer_(run_->committer == static_cast<int>(stage)) {}

  Status step(unsigned budget) override {
    if (out_->consumer_done.load(std::memory_order_acquire)) return finish({Outcome::Stopped, 0});
    bool progress = committer_ && run_->maybe_commit(takes_);
    Signal s;
    for (unsigned i = 0; i < budget; ++i) {
      if (has_pending_) {
        if (!out_->push(pending_)) return progress ? Progress : Blocked;
        has_pending_ = false;
      }
      if (waiting_) {
        Item x;
        if (!in_->pop(x)) {
          if (!in_->producer_done.load(std::memory_order_acquire)) return progress ? Progress : Blocked;
          if (!in_->pop(x)) return finish({Outcome::Starved, 0});
        }
        ++takes_;
        waiting_ = false;
        instance_->process(x, s);
      } else {
        instance_->tick(s);
      }
      progress = true;
      switch (s.kind) {
        case Signal::Yield:
          if (!out_->push(s.item)) {
            pending_ = s.item;
            has_pending_ = true;
          }
          break;
        case Signal::Skip: break;
        case Signal::Consume: waiting_ = true; break;
        case Signal::Done: return finish({Outcome::Finished, s.value()});
      }
    }
    return Progress;
  }
  std::string describe() const override {
    const Unit& u = *run_->stages[stage_];
    return fmt::format("task {} '{}' (stage {} of '{}', {} inputs taken)", u.task, to_string(u.comp), stage_,
                       run_->owner.comp.name(), takes_);
  }

 private:
  Status finish(Outcome outcome) {
    if (committer_) run_->final_takes = takes_;
    run_->stage_terminated(stage_, outcome);  // may complete the pipeline and activate continuations
    return Done;
  }
  std::shared_ptr<PipelineRun> run_;
  std::size_t stage_;
  std::unique_ptr<Instance> instance_;
  Channel* in_;
  Channel* out_;
  bool committer_;
  bool waiting_ = false, has_pending_ = false;
  Item pending_ = 0;
  std::uint64_t takes_ = 0;
};

class SourceTask final : public Task {
 public:
  SourceTask(const std::vector<Item>& input, Channel* channel) : input_(input), channel_(channel) {}
  Status step(unsigned budget) override {
    if (channel_->consumer_done.load(std::memory_order_acquire)) return Done;
    bool progress = false;
    for (unsigned i = 0; i < budget; ++i) {
      if (position_ == input_.size()) {
        channel_->producer_done.store(true, std::memory_order_release);
        return Done;
      }
      if (!channel_->push(input_[position_])) return progress ? Progress : Blocked;
      ++position_;
      progress = true;
    }
    return Progress;
  }
  std::string describe() const override {
    return fmt::format("the input source ({} of {} items written)", position_, input_.size());
  }

 private:
  const std::vector<Item>& input_;
  Channel* channel_;
  std::size_t position_ = 0;
};

// One activation of repeat / times / until: restarts the body after each normal finish.
struct LoopRun : std::enable_shared_from_this<LoopRun> {
  Scheduler& scheduler;
  const Unit& unit;
  Channel* in;
  Channel* out;
  Env env;
  Callback done;
  std::int64_t limit = 0, count = 0;
  LoopRun(Scheduler& scheduler_, const Unit& unit_, Channel* in_, Channel* out_, Env env_, Callback done_)
      : scheduler(scheduler_), unit(unit_), in(in_), out(out_), env(std::move(env_)), done(std::move(done_)) {}
  void start() {
    auto self = shared_from_this();
    scheduler.activate(*unit.children[0], in, out, env, [self](Outcome o) { self->body_done(o); });
  }
  void body_done(Outcome outcome) {
    const Node& n = unit.comp.node();
    if (outcome.kind != Outcome::Finished) return finish(outcome);  // starved or stopped: no restart
    if (n.op == Op::Until && n.pred(outcome.value)) return finish(outcome);
    if (n.op == Op::Times && ++count >= limit) return finish(outcome);
    start();
  }
  void finish(Outcome outcome) {
    Callback d = std::move(done);
    d(outcome);
  }
};

// Gives the pipeline the commit role on its input commit queue: its computer counts the takes, or
// its first stage when that is a task and there is no computer after it.
void assign_commit_role(PipelineRun& run, const std::optional<Cards>& cards) {
  Channel& in = *run.in;
  if (run.computer_stage > 0) {
    if (!cards || run.stages[static_cast<std::size_t>(run.computer_stage)]->kind != Unit::Task) {
      throw Error::format("stream pipeline '{}': cannot count commits on queue '{}' (see check_parallel)",
                          run.owner.comp.name(), in.name());
    }
    run.committer = run.computer_stage;
    run.cards = *cards;
  } else if (run.stages[0]->kind == Unit::Task) {
    run.committer = 0;
  }
  if (run.committer < 0) return;
  run.commit_queue = in.commit_queue();
  if (in.commit_queue()->capacity() < min_qsize(run.cards)) {
    throw Error::format("commit queue '{}' has capacity {}, below minQSize {} of pipeline '{}'; configure more",
                        in.name(), in.commit_queue()->capacity(), min_qsize(run.cards), run.owner.comp.name());
  }
}

}  // namespace

std::unique_ptr<Task> make_source_task(const std::vector<Item>& input, Channel* channel) {
  return std::make_unique<SourceTask>(input, channel);
}

void Scheduler::activate(const Unit& unit, Channel* in, Channel* out, const Env& env, Callback done) {
  switch (unit.kind) {
    case Unit::Task:
      start_pipeline(unit, {&unit}, unit.comp.is_computer() ? 0 : -1, Cards{}, in, out, env, std::move(done));
      return;
    case Unit::Pipeline: {
      std::vector<const Unit*> stages;
      for (const auto& child : unit.children) stages.push_back(child.get());
      start_pipeline(unit, std::move(stages), unit.computer_stage, unit.commit_cards, in, out, env, std::move(done));
      return;
    }
    case Unit::Bind: {
      const Unit* second = unit.children[1].get();
      const std::string* var = &unit.comp.node().var;
      const ItemType* var_type = &unit.comp.node().a.value_type();
      activate(*unit.children[0], in, out, env,
               [this, second, var, var_type, in, out, env, done = std::move(done)](Outcome o) {
                 if (o.kind != Outcome::Finished) return done(o);
                 activate(*second, in, out, var->empty() ? env : env.with(*var, o.value, *var_type), done);
               });
      return;
    }
    case Unit::Loop: {
      auto loop = std::make_shared<LoopRun>(*this, unit, in, out, env, std::move(done));
      if (unit.comp.node().op == Op::Times) {
        loop->limit = unit.comp.node().count(env);
        if (loop->limit <= 0) return loop->finish({Outcome::Finished, 0});
      }
      loop->start();
      return;
    }
    case Unit::If:
      activate(unit.comp.node().cond(env) ? *unit.children[0] : *unit.children[1], in, out, env, std::move(done));
      return;
  }
}

void Scheduler::start_pipeline(const Unit& owner, std::vector<const Unit*> stages, int computer_stage,
                               std::optional<Cards> cards, Channel* in, Channel* out, const Env& env, Callback done) {
  auto run = std::make_shared<PipelineRun>(*this, owner, std::move(stages), computer_stage, in, out, std::move(done));
  const std::size_t n = run->stages.size();
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const bool commit = needs_commit(*run->stages[i + 1]);
    run->inner.push_back(std::make_unique<Channel>(channel_name(*run->stages[i], *run->stages[i + 1]),
                                                   commit ? Channel::Commit : Channel::Spsc,
                                                   commit ? commit_capacity(options_) : options_.queue_capacity));
  }
  if (in->kind() == Channel::Commit) assign_commit_role(*run, cards);
  run->remaining.store(static_cast<int>(n), std::memory_order_release);
  for (std::size_t i = 0; i < n; ++i) {
    const Unit& stage = *run->stages[i];
    if (stage.kind == Unit::Task) {
      const unsigned thread = layout_.tasks()[static_cast<std::size_t>(stage.task)].thread;
      spawn(thread, std::make_unique<LeafTask>(run, i, instantiate(stage.comp, env)));
    } else {
      activate(stage, run->in_of(i), run->out_of(i), env, [run, i](Outcome o) { run->stage_terminated(i, o); });
    }
  }
}

}  // namespace korch::streams::detail
