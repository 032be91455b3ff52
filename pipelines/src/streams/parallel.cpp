// The parallel executor: activation of layout units, pipeline runs with commit roles, leaf tasks
// and the per-thread trampoline scheduler.
#include <korch/streams/commit_queue.hpp>
#include <korch/streams/parallel.hpp>
#include <korch/streams/spsc_ring.hpp>
#include <korch/cpu_relax.hpp>
#include <korch/thread_team.hpp>

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace korch::streams {

namespace {

struct Outcome {
  enum Kind { Finished, Starved, Stopped } kind = Starved;
  Value value = 0;
};
using Callback = std::function<void(Outcome)>;

#if defined(__SANITIZE_THREAD__)
#define KORCH_STREAMS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KORCH_STREAMS_TSAN 1
#endif
#endif

// Orders this thread's earlier stores before its later loads against another thread doing the same
// on `word` (the parking handshake: a parker counts itself in `word`, then rechecks its queues; a
// producer writes a queue, then reads `word`). ThreadSanitizer does not model fences (GCC refuses
// them under -fsanitize=thread); there a read-modify-write of `word` gives the same guarantee.
inline void store_load_barrier(std::atomic<unsigned>& word) {
#ifdef KORCH_STREAMS_TSAN
  word.fetch_add(0, std::memory_order_acq_rel);
#else
  (void)word;
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

bool needs_commit(const Unit& u) {
  switch (u.kind) {
    case Unit::Task: return false;
    case Unit::Pipeline: return needs_commit(*u.children.front());
    default: return true;
  }
}

class Channel {
 public:
  enum Kind { Spsc, Commit, Sink };
  Channel(std::string name, Kind kind, std::size_t capacity, std::vector<Item>* sink = nullptr)
      : kind_(kind), sink_(sink), name_(std::move(name)) {
    if (kind == Spsc) ring_ = std::make_unique<SpscRing<Item>>(name_, capacity);
    if (kind == Commit) cq_ = std::make_unique<CommitQueue<Item>>(name_, capacity);
  }
  bool push(Item x) {
    switch (kind_) {
      case Spsc: return ring_->try_push(x);
      case Commit: return cq_->try_write(x);
      case Sink: sink_->push_back(x); return true;
    }
    return false;
  }
  bool pop(Item& x) {
    switch (kind_) {
      case Spsc: return ring_->try_pop(x);
      case Commit: return cq_->try_read(x);
      case Sink: break;
    }
    throw Error::format("stream queue '{}' is the program's output; nothing reads it", name_);
  }
  Kind kind() const { return kind_; }
  CommitQueue<Item>* cq() { return cq_.get(); }
  SpscRing<Item>* ring() { return ring_.get(); }
  const std::string& name() const { return name_; }
  std::atomic<bool> producer_done{false};  // upstream FINISHED: nothing more will be written
  std::atomic<bool> consumer_done{false};  // downstream FINISHED: stop writing
 private:
  Kind kind_;
  std::vector<Item>* sink_;
  std::string name_;
  std::unique_ptr<SpscRing<Item>> ring_;
  std::unique_ptr<CommitQueue<Item>> cq_;
};

std::string channel_name(const Unit& from, const Unit& to) {
  return fmt::format("{} -> {}", from.comp.name(), to.comp.name());
}

std::string cards_text(const Cards& cards) {
  std::string s;
  for (const auto& c : cards) s += fmt::format("{}{}/{}", s.empty() ? "" : ", ", c.in, c.out);
  return s.empty() ? "none" : s;
}

std::size_t commit_capacity(const ParallelOptions& o) {
  return o.commit_queue_capacity ? o.commit_queue_capacity : o.queue_capacity;
}

void check_unit(const Unit& u, bool commit_in, const std::string& in_name, const ParallelOptions& o) {
  switch (u.kind) {
    case Unit::Task: return;
    case Unit::Pipeline: {
      if (commit_in && u.computer_stage > 0) {
        const Unit& c = *u.children[static_cast<std::size_t>(u.computer_stage)];
        if (c.kind != Unit::Task) {
          throw Error::format(
              "stream pipeline '{}': its computer stage '{}' contains a barrier, so nobody can count the "
              "takes to commit on queue '{}'; move the |>>>| or standalone out of that stage",
              u.comp.name(), c.comp.name(), in_name);
        }
        if (!u.commit_cards) {
          throw Error::format(
              "stream pipeline '{}': the stages before computer '{}' do not all declare a cardinality, so "
              "the commits on queue '{}' cannot be computed; build them from leaf transformers (n/m)",
              u.comp.name(), c.comp.name(), in_name);
        }
        const std::uint64_t need = min_qsize(*u.commit_cards);
        if (commit_capacity(o) < need) {
          throw Error::format(
              "commit queue '{}' has capacity {}, below minQSize {} of pipeline '{}' (cardinalities {} "
              "before computer '{}'): one take by the computer may need {} uncommitted reads, so the "
              "pipeline would deadlock; configure commit_queue_capacity >= {}",
              in_name, commit_capacity(o), need, u.comp.name(), cards_text(*u.commit_cards), c.comp.name(),
              need, need);
        }
      }
      for (std::size_t i = 0; i < u.children.size(); ++i) {
        if (i == 0) check_unit(*u.children[0], commit_in, in_name, o);
        else check_unit(*u.children[i], needs_commit(*u.children[i]), channel_name(*u.children[i - 1], *u.children[i]), o);
      }
      return;
    }
    default:
      for (const auto& ch : u.children) check_unit(*ch, true, in_name, o);
  }
}

class Exec;

class Task {
 public:
  enum Status { Progress, Blocked, Done };
  virtual ~Task() = default;
  virtual Status step(unsigned budget) = 0;
  virtual std::string describe() const = 0;
};

struct Sched {
  std::vector<std::unique_ptr<Task>> ring;
  std::mutex m;
  std::vector<std::unique_ptr<Task>> inbox;
  std::atomic<bool> has_inbox{false};
  std::condition_variable wake;  // a thread with no tasks sleeps here until a spawn or the end
};

struct PipeRun;

class Exec {
 public:
  Exec(const Layout& layout, const ParallelOptions& o) : layout_(layout), o_(o) {
    for (unsigned i = 0; i < layout.threads(); ++i) scheds_.push_back(std::make_unique<Sched>());
    busy_seconds.assign(layout.threads(), 0.0);
  }
  std::vector<double> busy_seconds;  // per thread, written by that thread, read after the team's wait()
  void spawn(unsigned thread, std::unique_ptr<Task> t) {
    live_.fetch_add(1, std::memory_order_acq_rel);
    tasks_run_.fetch_add(1, std::memory_order_relaxed);
    Sched& s = *scheds_[thread % scheds_.size()];
    {
      std::lock_guard<std::mutex> g(s.m);
      s.inbox.push_back(std::move(t));
      s.has_inbox.store(true, std::memory_order_release);
    }
    s.wake.notify_one();  // the thread had no tasks and sleeps
    wake_parked();        // the thread's tasks are blocked and it sleeps
  }
  // Wakes the threads that sleep with no tasks, to see the run end or fail.
  void wake_empty_threads() {
    for (auto& s : scheds_) {
      { std::lock_guard<std::mutex> g(s->m); }  // the sleeper is waiting or will see the change
      s->wake.notify_all();
    }
  }
  bool run_over() const {
    return abort_.load(std::memory_order_acquire) ||
           (root_done_.load(std::memory_order_acquire) && live_.load(std::memory_order_acquire) == 0);
  }
  // Called after every change another scheduler thread may be waiting for (a task made progress or
  // finished, a task was spawned, the run ended or failed). Cheap while nobody is parked. The
  // barrier pairs with the one in run_thread: either this thread sees the parked count, or the
  // parking thread's last sweep sees the change.
  void wake_parked() {
    store_load_barrier(parked_);
    if (parked_.load(std::memory_order_relaxed) == 0) return;
    {
      std::lock_guard<std::mutex> g(park_m_);
      ++park_epoch_;
    }
    park_cv_.notify_all();
  }
  void activate(const Unit& u, Channel* in, Channel* out, const Env& env, Callback done);
  void start_pipeline(const Unit& owner, std::vector<const Unit*> stages, int computer_stage,
                      std::optional<Cards> cards, Channel* in, Channel* out, const Env& env, Callback done);
  void run_thread(unsigned idx);
  void fail(std::exception_ptr e) {
    {
      std::lock_guard<std::mutex> g(err_m_);
      if (!error_) error_ = e;
    }
    abort_.store(true, std::memory_order_release);
    wake_parked();
    wake_empty_threads();
  }
  void set_root_done() {
    root_done_.store(true, std::memory_order_release);
    wake_empty_threads();
  }
  std::exception_ptr error() {
    std::lock_guard<std::mutex> g(err_m_);
    return error_;
  }
  const Layout& layout() const { return layout_; }
  const ParallelOptions& options() const { return o_; }
  std::atomic<std::uint64_t> commits{0}, committed_items{0}, rollbacks{0}, rolled_back_items{0};
  std::uint64_t tasks_run() const { return tasks_run_.load(); }
  std::uint64_t parks() const { return parks_.load(); }
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();

 private:
  const Layout& layout_;
  ParallelOptions o_;
  std::vector<std::unique_ptr<Sched>> scheds_;
  std::atomic<long> live_{0};
  std::atomic<std::uint64_t> tasks_run_{0};
  std::atomic<bool> root_done_{false}, abort_{false};
  // Parking of idle scheduler threads (see run_thread).
  std::atomic<unsigned> parked_{0};
  std::atomic<std::uint64_t> parks_{0};
  std::mutex park_m_;
  std::condition_variable park_cv_;
  std::uint64_t park_epoch_ = 0;  // guarded by park_m_
  std::mutex err_m_;
  std::exception_ptr error_;
};

// One activation of a pipeline (a single task counts as a one-stage pipeline).
struct PipeRun {
  Exec& ex;
  const Unit& owner;
  std::vector<const Unit*> stages;
  int computer_stage;
  Channel* in;
  Channel* out;
  Callback done;
  std::vector<std::unique_ptr<Channel>> inner;  // inner[i]: stage i -> stage i+1
  std::atomic<int> remaining{0};
  Outcome comp_outcome;
  // commit role on `in` when it is a commit queue
  CommitQueue<Item>* cq = nullptr;
  int committer = -1;
  Cards cards;
  std::uint64_t committed = 0;  // written by the committer task, then by complete()
  std::uint64_t final_k = 0;

  PipeRun(Exec& e, const Unit& o, std::vector<const Unit*> s, int cs, Channel* i, Channel* ou, Callback d)
      : ex(e), owner(o), stages(std::move(s)), computer_stage(cs), in(i), out(ou), done(std::move(d)) {}

  Channel* in_of(std::size_t i) { return i == 0 ? in : inner[i - 1].get(); }
  Channel* out_of(std::size_t i) { return i + 1 == stages.size() ? out : inner[i].get(); }

  void commit_up_to(std::uint64_t k) {
    const std::uint64_t target = takes(cards, k);
    if (target > committed) {
      cq->commit(target - committed);
      ex.commits.fetch_add(1, std::memory_order_relaxed);
      ex.committed_items.fetch_add(target - committed, std::memory_order_relaxed);
      committed = target;
    }
  }
  // Batched commits: only when the producer is stuck on a full queue.
  // Returns true when it committed (which frees space the writer may be waiting for).
  bool maybe_commit(std::uint64_t k) {
    if (!cq->full()) return false;
    const std::uint64_t before = committed;
    commit_up_to(k);
    return committed != before;
  }

  void stage_terminated(std::size_t i, Outcome o) {
    const bool first = i == 0, last = i + 1 == stages.size();
    if (o.kind == Outcome::Finished || o.kind == Outcome::Stopped) {
      if (!first) in_of(i)->consumer_done.store(true, std::memory_order_release);
    }
    if (o.kind == Outcome::Finished || o.kind == Outcome::Starved) {
      if (!last) out_of(i)->producer_done.store(true, std::memory_order_release);
    }
    if (static_cast<int>(i) == computer_stage) comp_outcome = o;
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) complete();
  }

  void complete() {
    Outcome o;
    if (computer_stage >= 0) {
      o = comp_outcome;
    } else {
      o.kind = out->consumer_done.load(std::memory_order_acquire) ? Outcome::Stopped : Outcome::Starved;
    }
    if (cq != nullptr && committer >= 0) {
      commit_up_to(final_k);
      if (o.kind != Outcome::Starved) {
        const std::uint64_t undo = cq->uncommitted();
        cq->rollback();
        ex.rollbacks.fetch_add(1, std::memory_order_relaxed);
        ex.rolled_back_items.fetch_add(undo, std::memory_order_relaxed);
      }
    }
    Callback d = std::move(done);
    d(o);
  }
};

class LeafTask final : public Task {
 public:
  LeafTask(std::shared_ptr<PipeRun> run, std::size_t stage, std::unique_ptr<Proc> proc)
      : run_(std::move(run)), stage_(stage), proc_(std::move(proc)),
        in_(run_->in_of(stage)), out_(run_->out_of(stage)),
        committer_(run_->committer == static_cast<int>(stage)) {}

  Status step(unsigned budget) override {
    if (out_->consumer_done.load(std::memory_order_acquire)) return finish({Outcome::Stopped, 0});
    bool progress = committer_ && run_->maybe_commit(k_);
    for (unsigned i = 0; i < budget; ++i) {
      if (has_pending_) {
        if (!out_->push(pending_)) return progress ? Progress : Blocked;
        has_pending_ = false;
      }
      Signal s;
      if (waiting_) {
        Item x;
        if (!in_->pop(x)) {
          if (!in_->producer_done.load(std::memory_order_acquire)) return progress ? Progress : Blocked;
          if (!in_->pop(x)) return finish({Outcome::Starved, 0});
        }
        ++k_;
        waiting_ = false;
        s = proc_->process(x);
      } else {
        s = proc_->tick();
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
        case Signal::Done: return finish({Outcome::Finished, s.value});
      }
    }
    return Progress;
  }
  std::string describe() const override {
    const Unit& u = *run_->stages[stage_];
    return fmt::format("task {} '{}' (stage {} of '{}', {} inputs taken)", u.task, to_string(u.comp), stage_,
                       run_->owner.comp.name(), k_);
  }

 private:
  Status finish(Outcome o) {
    if (committer_) run_->final_k = k_;
    run_->stage_terminated(stage_, o);  // may complete the pipeline and activate continuations
    return Done;
  }
  std::shared_ptr<PipeRun> run_;
  std::size_t stage_;
  std::unique_ptr<Proc> proc_;
  Channel* in_;
  Channel* out_;
  bool committer_;
  bool waiting_ = false, has_pending_ = false;
  Item pending_ = 0;
  std::uint64_t k_ = 0;
};

class SourceTask final : public Task {
 public:
  SourceTask(const std::vector<Item>& input, Channel* ch) : input_(input), ch_(ch) {}
  Status step(unsigned budget) override {
    if (ch_->consumer_done.load(std::memory_order_acquire)) return Done;
    bool progress = false;
    for (unsigned i = 0; i < budget; ++i) {
      if (pos_ == input_.size()) {
        ch_->producer_done.store(true, std::memory_order_release);
        return Done;
      }
      if (!ch_->push(input_[pos_])) return progress ? Progress : Blocked;
      ++pos_;
      progress = true;
    }
    return Progress;
  }
  std::string describe() const override { return fmt::format("the input source ({} of {} items written)", pos_, input_.size()); }
 private:
  const std::vector<Item>& input_;
  Channel* ch_;
  std::size_t pos_ = 0;
};

struct LoopRun : std::enable_shared_from_this<LoopRun> {
  Exec& ex;
  const Unit& u;
  Channel* in;
  Channel* out;
  Env env;
  Callback done;
  Value limit = 0, count = 0;
  LoopRun(Exec& e, const Unit& un, Channel* i, Channel* o, Env en, Callback d)
      : ex(e), u(un), in(i), out(o), env(std::move(en)), done(std::move(d)) {}
  void start() {
    auto self = shared_from_this();
    ex.activate(*u.children[0], in, out, env, [self](Outcome o) { self->body_done(o); });
  }
  void body_done(Outcome o) {
    const Node& n = u.comp.node();
    if (o.kind != Outcome::Finished) return finish(o);  // starved or stopped: no restart
    if (n.op == Op::Until && n.pred(o.value)) return finish(o);
    if (n.op == Op::Times && ++count >= limit) return finish(o);
    start();
  }
  void finish(Outcome o) {
    Callback d = std::move(done);
    d(o);
  }
};

void Exec::activate(const Unit& u, Channel* in, Channel* out, const Env& env, Callback done) {
  switch (u.kind) {
    case Unit::Task:
      start_pipeline(u, {&u}, u.comp.is_computer() ? 0 : -1, Cards{}, in, out, env, std::move(done));
      return;
    case Unit::Pipeline: {
      std::vector<const Unit*> stages;
      for (const auto& ch : u.children) stages.push_back(ch.get());
      start_pipeline(u, std::move(stages), u.computer_stage, u.commit_cards, in, out, env, std::move(done));
      return;
    }
    case Unit::Bind: {
      const Unit* second = u.children[1].get();
      const std::string* var = &u.comp.node().var;
      activate(*u.children[0], in, out, env, [this, second, var, in, out, env, done = std::move(done)](Outcome o) {
        if (o.kind != Outcome::Finished) return done(o);
        activate(*second, in, out, var->empty() ? env : env.with(*var, o.value), done);
      });
      return;
    }
    case Unit::Loop: {
      auto lr = std::make_shared<LoopRun>(*this, u, in, out, env, std::move(done));
      if (u.comp.node().op == Op::Times) {
        lr->limit = u.comp.node().count(env);
        if (lr->limit <= 0) return lr->finish({Outcome::Finished, 0});
      }
      lr->start();
      return;
    }
    case Unit::If:
      activate(u.comp.node().cond(env) ? *u.children[0] : *u.children[1], in, out, env, std::move(done));
      return;
  }
}

void Exec::start_pipeline(const Unit& owner, std::vector<const Unit*> stages, int computer_stage,
                          std::optional<Cards> cards, Channel* in, Channel* out, const Env& env, Callback done) {
  auto run = std::make_shared<PipeRun>(*this, owner, std::move(stages), computer_stage, in, out, std::move(done));
  const std::size_t n = run->stages.size();
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const bool commit = needs_commit(*run->stages[i + 1]);
    run->inner.push_back(std::make_unique<Channel>(channel_name(*run->stages[i], *run->stages[i + 1]),
                                                   commit ? Channel::Commit : Channel::Spsc,
                                                   commit ? commit_capacity(o_) : o_.queue_capacity));
  }
  if (in->kind() == Channel::Commit) {
    if (computer_stage > 0) {
      if (!cards || run->stages[static_cast<std::size_t>(computer_stage)]->kind != Unit::Task) {
        throw Error::format("stream pipeline '{}': cannot count commits on queue '{}' (see check_parallel)",
                            owner.comp.name(), in->name());
      }
      run->committer = computer_stage;
      run->cards = *cards;
    } else if (run->stages[0]->kind == Unit::Task) {
      run->committer = 0;
    }
    if (run->committer >= 0) {
      run->cq = in->cq();
      if (in->cq()->capacity() < min_qsize(run->cards)) {
        throw Error::format("commit queue '{}' has capacity {}, below minQSize {} of pipeline '{}'; configure more",
                            in->name(), in->cq()->capacity(), min_qsize(run->cards), owner.comp.name());
      }
    }
  }
  run->remaining.store(static_cast<int>(n), std::memory_order_release);
  for (std::size_t i = 0; i < n; ++i) {
    const Unit& s = *run->stages[i];
    if (s.kind == Unit::Task) {
      const unsigned thread = layout_.tasks()[static_cast<std::size_t>(s.task)].thread;
      spawn(thread, std::make_unique<LeafTask>(run, i, instantiate(s.comp, env)));
    } else {
      activate(s, run->in_of(i), run->out_of(i), env, [run, i](Outcome o) { run->stage_terminated(i, o); });
    }
  }
}

void Exec::run_thread(unsigned idx) {
  Sched& s = *scheds_[idx];
  auto& ring = s.ring;
  std::size_t cur = 0;
  bool progressed = false;
  // Busy time = the thread's run time less its idle periods, so that the clock is read only when a
  // thread goes idle or resumes, not around every visit.
  bool idle = false;
  std::chrono::steady_clock::time_point idle_since{};
  std::chrono::steady_clock::duration idle_total{0};
  struct Record {  // publish the busy time however the loop ends
    Exec& ex;
    unsigned idx;
    const bool& idle;
    const std::chrono::steady_clock::time_point& idle_since;
    const std::chrono::steady_clock::duration& idle_total;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~Record() {
      const auto end = std::chrono::steady_clock::now();
      const auto busy = (idle ? idle_since : end) - start - idle_total;
      ex.busy_seconds[idx] = std::chrono::duration<double>(busy).count();
    }
  } record{*this, idx, idle, idle_since, idle_total};
  const unsigned budget = o_.steps_per_visit ? o_.steps_per_visit : 1;
  // Idle handling: a thread whose sweeps find nothing to do polls for o_.idle_spin. Then
  // a thread with no tasks sleeps on its own condition variable until a task is spawned to it or the
  // run ends. A thread whose tasks are all blocked arms: counts itself parked, orders that before its
  // loads, and sweeps once more; if that sweep finds nothing either it sleeps until another thread
  // calls wake_parked() after a change. Either sleep lasts at most 1 ms (the deadline checks).
  unsigned idle_sweeps = 0;
  bool armed = false;
  std::uint64_t armed_epoch = 0;
  auto disarm = [&] {
    if (armed) parked_.fetch_sub(1, std::memory_order_relaxed);
    armed = false;
  };
  struct Disarm {  // however the loop ends
    decltype(disarm)& f;
    ~Disarm() { f(); }
  } disarm_at_exit{disarm};
  while (!abort_.load(std::memory_order_acquire)) {
    if (s.has_inbox.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> g(s.m);
      for (auto& t : s.inbox) ring.push_back(std::move(t));
      s.inbox.clear();
      s.has_inbox.store(false, std::memory_order_relaxed);
    }
    if (cur >= ring.size()) {
      cur = 0;
      if (!progressed) {
        if (ring.empty() && root_done_.load(std::memory_order_acquire) &&
            live_.load(std::memory_order_acquire) == 0) {
          break;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now > deadline) {
          std::string what;
          for (const auto& t : ring) what += "\n  " + t->describe();
          fail(std::make_exception_ptr(Error::format(
              "stream program ran past its timeout of {} ms; scheduler thread {} still holds {} task(s):{}",
              o_.timeout.count(), idx, ring.size(), what.empty() ? std::string(" none") : what)));
          break;
        }
        if (armed) {
          std::unique_lock<std::mutex> lk(park_m_);
          parks_.fetch_add(1, std::memory_order_relaxed);
          park_cv_.wait_for(lk, std::chrono::milliseconds(1), [&] {
            return park_epoch_ != armed_epoch || abort_.load(std::memory_order_acquire);
          });
          lk.unlock();
          disarm();
        } else if (!idle) {
          idle = true;
          idle_since = now;
          idle_sweeps = 0;
        } else if (std::chrono::duration_cast<std::chrono::microseconds>(now - idle_since) < o_.idle_spin) {
          // Mostly spin on the core (a yield is a system call that also slows a hyperthread sibling
          // doing the work), yielding now and then for threads that share this core.
          if ((++idle_sweeps & 15U) == 0) std::this_thread::yield();
          else cpu_relax();
        } else if (ring.empty()) {
          std::unique_lock<std::mutex> lk(s.m);
          parks_.fetch_add(1, std::memory_order_relaxed);
          s.wake.wait_for(lk, std::chrono::milliseconds(1),
                          [&] { return s.has_inbox.load(std::memory_order_acquire) || run_over(); });
        } else {
          {
            std::lock_guard<std::mutex> g(park_m_);
            armed_epoch = park_epoch_;
          }
          parked_.fetch_add(1, std::memory_order_relaxed);
          store_load_barrier(parked_);  // pairs with the one in wake_parked()
          armed = true;
        }
      } else {
        if (idle) idle_total += std::chrono::steady_clock::now() - idle_since;
        idle = false;
        disarm();
      }
      progressed = false;
      if (ring.empty()) continue;
    }
    Task::Status st;
    try {
      st = ring[cur]->step(budget);
    } catch (const std::exception& e) {
      fail(std::make_exception_ptr(Error::format("stream {} on scheduler thread {} failed: {}",
                                                 ring[cur]->describe(), idx, e.what())));
      break;
    } catch (...) {
      fail(std::current_exception());
      break;
    }
    if (st == Task::Done) {
      // O(1) removal of the current task; the next one slides into its place.
      std::swap(ring[cur], ring.back());
      ring.pop_back();
      if (live_.fetch_sub(1, std::memory_order_acq_rel) == 1) wake_empty_threads();
      progressed = true;
    } else {
      progressed = progressed || st == Task::Progress;
      ++cur;
    }
    if (st != Task::Blocked) wake_parked();
  }
}

struct SchedItem : DataItem {
  explicit SchedItem(unsigned i) : index(i) {}
  unsigned index;
  std::string describe() const override { return fmt::format("stream scheduler thread {}", index); }
};

}  // namespace

void check_parallel(const Layout& layout, const ParallelOptions& options) {
  if (options.queue_capacity == 0) throw Error("stream executor: queue_capacity 0; give every queue at least 1 slot");
  if (options.idle_spin.count() < 0) {
    throw Error::format("stream executor: idle_spin is {} us; give 0 (sleep at once) or more, "
                        "or std::chrono::microseconds::max() to never sleep", options.idle_spin.count());
  }
  check_unit(layout.root(), needs_commit(layout.root()), "input", options);
}

ParallelResult run_parallel(const Comp& program, const std::vector<Item>& input, const ParallelOptions& options,
                            ThreadTeam* team, const Env& env) {
  Layout layout(program, options.threads);
  check_parallel(layout, options);
  ParallelResult result;
  result.warnings = layout.warnings();

  Exec ex(layout, options);
  if (options.timeout.count() > 0) ex.deadline = std::chrono::steady_clock::now() + options.timeout;
  const bool root_commit = needs_commit(layout.root());
  Channel in("input", root_commit ? Channel::Commit : Channel::Spsc,
             root_commit ? commit_capacity(options) : options.queue_capacity);
  Channel out("output", Channel::Sink, 0, &result.output);
  Outcome root;
  ex.spawn(0, std::make_unique<SourceTask>(input, &in));
  ex.activate(layout.root(), &in, &out, env, [&](Outcome o) {
    root = o;
    in.consumer_done.store(true, std::memory_order_release);  // stop the source
    ex.set_root_done();
  });

  std::unique_ptr<ThreadTeam> own;
  if (team == nullptr) {
    own = std::make_unique<ThreadTeam>("korch-streams", options.threads);
    team = own.get();
  } else if (team->n_max() < options.threads) {
    throw Error::format("stream executor: team '{}' has {} threads but {} scheduler threads were asked for; "
                        "use a team with n_max >= {} or fewer threads",
                        team->name(), team->n_max(), options.threads, options.threads);
  }
  team->start_cycle(ActionRoutine("stream-trampoline",
                                  [&ex](const ActionContext&, DataItem& item) {
                                    ex.run_thread(static_cast<SchedItem&>(item).index);
                                  }),
                    options.threads);
  for (unsigned i = 0; i < options.threads; ++i) team->enqueue(std::make_shared<SchedItem>(i));
  team->close_queue();
  team->wait();
  if (auto e = ex.error()) std::rethrow_exception(e);

  if (root.kind == Outcome::Finished) result.value = root.value;
  result.starved = root.kind == Outcome::Starved;
  result.consumed = in.kind() == Channel::Commit ? in.cq()->front() : in.ring()->popped();
  result.commits = {ex.commits.load(), ex.committed_items.load(), ex.rollbacks.load(), ex.rolled_back_items.load()};
  result.tasks_run = ex.tasks_run();
  result.parks = ex.parks();
  result.busy_seconds = ex.busy_seconds;
  return result;
}

}  // namespace korch::streams
