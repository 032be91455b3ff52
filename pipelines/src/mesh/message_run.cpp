// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The message-driven executor's runs: device handlers (begin, read_recv, write_recv, execute and
// the sends that follow), the controller (ends and the reduction globals), and delivery of the
// messages as thread-team items, in batches or one at a time in random order.
#include "message_program.hpp"

#include <korch/action_routine.hpp>
#include <korch/data_item.hpp>
#include <korch/error.hpp>
#include <korch/thread_team.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <random>
#include <utility>

namespace korch::mesh {

namespace {

using Program = MessageExecutor::Program;
using detail::DeliveryToken;
using detail::kStripes;
using detail::Message;
using detail::MessageBatch;
using detail::MessageKind;

// One run of an invocation: the device handlers, the controller, and message delivery through the
// executor's thread team.
struct Run {
  Program& p;
  const MessageOptions& options;
  ThreadTeam& team;

  std::atomic<std::int64_t> outstanding{0};
  MessageCounters<std::atomic<std::uint64_t>> counts;  // handlers add theirs after each item

  // controller
  std::mutex ctl;
  std::condition_variable ctl_cv;
  int ends = 0;
  bool failed = false;
  std::exception_ptr error;
  std::vector<unsigned char> acc;  // combined end payloads

  // random delivery
  std::mutex pool_mutex;
  std::vector<Message> pool;
  std::mt19937_64 rng;
  std::shared_ptr<DeliveryToken> token = std::make_shared<DeliveryToken>();

  Run(Program& prog, const MessageOptions& opts, ThreadTeam& t) : p(prog), options(opts), team(t) {}

  // ---- device side ----
  void start(int d, const Program::SetSlot& slot) {
    if (!p.in_progress[static_cast<std::size_t>(d)]) {
      p.in_progress[static_cast<std::size_t>(d)] = 1;
      p.read_send_mask[static_cast<std::size_t>(d)] = slot.read_send_mask_all;
    }
  }

  void execute(int d, const Program::SetSlot& slot, int element) {
    std::size_t du = static_cast<std::size_t>(d);
    p.read_recv_count[du] = 0;
    ++p.write_recv_count[du];  // execute counts as a write
    ++p.r_execute[du];
    if (!slot.iteration || !p.runs(element)) return;
    const std::size_t na = p.args.size();
    void* ptrs[64];
    for (std::size_t i = 0; i < na; ++i) {
      const ArgInfo& a = p.args[i];
      if (a.indirect()) {
        unsigned char* pad = p.pad(element, static_cast<int>(i));
        if (a.access == Access::Inc) a.zero(pad);
        ptrs[i] = pad;
      } else if (a.is_dat()) {
        ptrs[i] = p.base[i] + static_cast<std::size_t>(element) * a.element_bytes;  // direct INC never zeroed
      } else if (a.global->kind() == GlobalKind::Constant) {
        ptrs[i] = p.base[i];  // graph property global_{name}
      } else {
        unsigned char* pad = p.pad(element, static_cast<int>(i));
        if (a.access == Access::Inc) a.zero(pad);
        ptrs[i] = pad;
      }
    }
    p.loop->call_kernel(ptrs);
    p.write_send_mask[du] = slot.write_send_mask_all;
  }

  // Every write to device d is in: its INC writes add in writer order.
  void add_inbox(int d, int element) {
    const std::size_t du = static_cast<std::size_t>(d);
    for (int k = p.inbox_offsets[du]; k < p.inbox_offsets[du + 1]; ++k) {
      const int i = p.inbox_entries[static_cast<std::size_t>(k)].arg;
      const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
      a.inc(p.base[static_cast<std::size_t>(i)] + static_cast<std::size_t>(element) * a.element_bytes, p.inbox_at(k));
    }
  }

  void push(std::vector<Message>& out, MessageKind kind, int dst, int arg, const void* payload, std::size_t bytes) {
    out.emplace_back();
    Message& m = out.back();
    m.kind = kind;
    m.arg = static_cast<std::uint16_t>(arg);
    m.dst = dst;
    if (bytes) std::memcpy(m.payload, payload, bytes);
  }

  void progress(int d, const Program::SetSlot& slot, int element, std::vector<Message>& out, MessageCounts& t) {
    const std::size_t du = static_cast<std::size_t>(d);
    if (!p.in_progress[du]) return;
    if (p.read_recv_count[du] == p.read_recv_total[du]) {
      execute(d, slot, element);
      ++t.execute;
    }
    while (p.read_send_mask[du]) {  // {inv}_dat_{d}_read_send: one send, fanned out along its edges
      const int b = __builtin_ctz(p.read_send_mask[du]);
      p.read_send_mask[du] &= ~(std::uint32_t{1} << b);
      const Program::ReadDat& rd = p.read_dats[static_cast<std::size_t>(slot.read_dats[static_cast<std::size_t>(b)])];
      const unsigned char* value =
          p.base[static_cast<std::size_t>(rd.arg)] + static_cast<std::size_t>(element) * rd.bytes;
      ++t.read_send;
      for (int k = rd.offsets[static_cast<std::size_t>(element)]; k < rd.offsets[static_cast<std::size_t>(element) + 1];
           ++k) {
        const auto& [e, arg] = rd.consumers[static_cast<std::size_t>(k)];
        push(out, MessageKind::ReadRecv, p.slots[static_cast<std::size_t>(p.iter_slot)].base + e, arg, value, rd.bytes);
      }
    }
    while (p.write_send_mask[du]) {  // {inv}_arg{i}_write_send
      const int b = __builtin_ctz(p.write_send_mask[du]);
      p.write_send_mask[du] &= ~(std::uint32_t{1} << b);
      const int i = p.write_args[static_cast<std::size_t>(b)];
      const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
      const int target = p.slots[static_cast<std::size_t>(p.write_slot_of_arg[static_cast<std::size_t>(i)])].base +
                         a.map(element, a.index);
      ++t.write_send;
      push(out, MessageKind::WriteRecv, target, i, p.pad(element, i), a.element_bytes);
      out.back().src =
          p.inbox_entry_of[static_cast<std::size_t>(element) * p.write_args.size() + static_cast<std::size_t>(b)];
    }
    if (p.read_send_mask[du] == 0 && p.write_send_mask[du] == 0 &&
        p.write_recv_count[du] == p.write_recv_expected[du] + 1) {  // {inv}_end
      add_inbox(d, element);
      out.emplace_back();
      Message& m = out.back();
      m.kind = MessageKind::End;
      m.arg = 0;
      m.dst = -1;
      m.src = d;
      for (int i : p.reduction_args) {
        const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
        unsigned char* dst = m.payload + p.end_offset[static_cast<std::size_t>(i)];
        if (slot.iteration && p.reduces(element))
          std::memcpy(dst, p.pad(element, i), a.element_bytes);
        else if (a.access == Access::Inc)
          a.zero(dst);
        else
          std::memcpy(dst, p.base[static_cast<std::size_t>(i)], a.element_bytes);  // MIN/MAX: neutral
      }
      p.write_recv_count[du] = 0;
      p.in_progress[du] = 0;
      p.begun[du] = 0;
      ++p.r_end[du];
    }
  }

  void handle(Message& m, std::vector<Message>& out, MessageCounts& t) {
    if (m.dst < 0) {
      controller_end(m);
      ++t.end;
      return;
    }
    const int d = m.dst;
    const std::size_t du = static_cast<std::size_t>(d);
    std::lock_guard<std::mutex> lock(p.locks[du % kStripes]);
    const Program::SetSlot& slot = p.slots[static_cast<std::size_t>(p.slot_of(d))];
    const int element = d - slot.base;
    switch (m.kind) {
      case MessageKind::Begin:
        if (p.begun[du])
          throw Error::format("invocation '{}': device {} received a second {}_begin", p.inv, p.device_name(d), p.inv);
        start(d, slot);
        p.begun[du] = 1;
        ++p.read_recv_count[du];
        ++p.r_begin[du];
        ++t.begin;
        if (slot.iteration) {  // begin carries the mutable globals: READ value, MIN/MAX start value
          for (std::size_t i = 0; i < p.args.size(); ++i) {
            const ArgInfo& a = p.args[i];
            if (!a.is_dat() && a.global->kind() == GlobalKind::Mutable && a.access != Access::Inc)
              std::memcpy(p.pad(element, static_cast<int>(i)), p.base[i], a.element_bytes);
          }
        }
        break;
      case MessageKind::ReadRecv:
        if (!p.begun[du]) ++t.early;
        start(d, slot);
        std::memcpy(p.pad(element, m.arg), m.payload, p.args[m.arg].element_bytes);
        ++p.read_recv_count[du];
        ++p.r_read_recv[du];
        ++t.read_recv;
        break;
      case MessageKind::WriteRecv: {
        if (!p.begun[du]) ++t.early;
        start(d, slot);
        const ArgInfo& a = p.args[m.arg];
        unsigned char* dst = p.base[m.arg] + static_cast<std::size_t>(element) * a.element_bytes;
        if (a.access == Access::Inc)
          std::memcpy(p.inbox_at(m.src), m.payload, a.element_bytes);  // added by add_inbox
        else
          std::memcpy(dst, m.payload, a.element_bytes);
        ++p.write_recv_count[du];
        ++p.r_write_recv[du];
        ++t.write_recv;
        break;
      }
      case MessageKind::End:
        throw Error::format("invocation '{}': device {} received an end message", p.inv, p.device_name(d));
    }
    progress(d, slot, element, out, t);
  }

  // ---- controller side ----
  void controller_end(const Message& m) {
    std::lock_guard<std::mutex> lock(ctl);
    if (p.end_bytes > 0)
      std::memcpy(p.end_payloads.data() + static_cast<std::size_t>(m.src) * p.end_bytes, m.payload, p.end_bytes);
    if (++ends == p.n_begun()) ctl_cv.notify_all();
  }

  // The ends' reductions in device order, whatever order they came in.
  void combine_ends() {
    for (int k = 0; k < p.n_begun(); ++k) {
      const unsigned char* payload = p.end_payloads.data() + static_cast<std::size_t>(p.begun_device(k)) * p.end_bytes;
      for (int i : p.reduction_args) {
        const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
        a.combine(acc.data() + p.end_offset[static_cast<std::size_t>(i)],
                  payload + p.end_offset[static_cast<std::size_t>(i)], a.access);
      }
    }
  }

  void fail(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(ctl);
    if (!failed) error = e;
    failed = true;
    ctl_cv.notify_all();
  }

  void settle(std::int64_t added, std::int64_t consumed) {
    outstanding.fetch_add(added, std::memory_order_acq_rel);
    if (outstanding.fetch_sub(consumed, std::memory_order_acq_rel) == consumed) {
      std::lock_guard<std::mutex> lock(ctl);
      ctl_cv.notify_all();
    }
  }

  // Ordered delivery: an item is a batch; its outgoing messages leave as new batches.
  void send_batches(std::vector<Message>& out) {
    const std::size_t b = std::max<std::size_t>(options.batch, 1);
    for (std::size_t i = 0; i < out.size(); i += b) {
      auto batch = std::make_shared<MessageBatch>();
      batch->messages.assign(out.begin() + static_cast<std::ptrdiff_t>(i),
                             out.begin() + static_cast<std::ptrdiff_t>(std::min(out.size(), i + b)));
      team.enqueue(std::move(batch));
    }
  }

  void on_batch(DataItem& item) {
    auto& batch = static_cast<MessageBatch&>(item);
    std::vector<Message> out;
    MessageCounts t;
    try {
      for (Message& m : batch.messages) handle(m, out, t);
    } catch (...) {
      fail(std::current_exception());
      throw;
    }
    counts += t;
    outstanding.fetch_add(static_cast<std::int64_t>(out.size()), std::memory_order_acq_rel);
    send_batches(out);
    settle(0, static_cast<std::int64_t>(batch.messages.size()));
  }

  // Random delivery: an item is a token; it delivers one message drawn from the pool.
  void on_token() {
    Message m;
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      if (pool.empty()) return;
      const std::size_t k = static_cast<std::size_t>(rng() % pool.size());
      m = pool[k];
      pool[k] = pool.back();
      pool.pop_back();
    }
    std::vector<Message> out;
    MessageCounts t;
    try {
      handle(m, out, t);
    } catch (...) {
      fail(std::current_exception());
      throw;
    }
    counts += t;
    outstanding.fetch_add(static_cast<std::int64_t>(out.size()), std::memory_order_acq_rel);
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      pool.insert(pool.end(), out.begin(), out.end());
    }
    for (std::size_t k = 0; k < out.size(); ++k) team.enqueue(token);
    settle(0, 1);
  }
};
// The devices' state is the dats' host copies; constant globals are graph properties.
void bind(Program& p, const ParLoopBase& loop) {
  p.loop = &loop;
  for (std::size_t i = 0; i < p.args.size(); ++i) {
    const ArgInfo& a = p.args[i];
    p.base[i] = a.is_dat() ? static_cast<unsigned char*>(a.dat->host_bytes(modifies(a.access)))
                           : static_cast<unsigned char*>(a.global->bytes());
  }
  for (auto* v : {&p.r_begin, &p.r_end, &p.r_execute, &p.r_read_recv, &p.r_write_recv})
    std::fill(v->begin(), v->end(), 0);
}

// A run that ended with no message in flight before every device sent its end: the first devices
// still waiting, with their state.
Error stall_error(const Program& p, int ends) {
  std::string stuck;
  int shown = 0;
  for (int k = 0; k < p.n_begun() && shown < 5; ++k) {
    const int d = p.begun_device(k);
    if (p.r_end[static_cast<std::size_t>(d)] == 1) continue;
    const std::size_t du = static_cast<std::size_t>(d);
    stuck += fmt::format(
        "\n  {}: in_progress={} read_recv_count={}/{} write_recv_count={}/{}+1 read_send_mask={:#x} "
        "write_send_mask={:#x}",
        p.device_name(d), p.in_progress[du], p.read_recv_count[du], p.read_recv_total[du], p.write_recv_count[du],
        p.write_recv_expected[du], p.read_send_mask[du], p.write_send_mask[du]);
    ++shown;
  }
  return Error::format(
      "message-driven executor: invocation '{}' stalled: {} of {} devices sent {}_end and no message "
      "is in flight; first devices still waiting:{}",
      p.inv, ends, p.n_begun(), p.inv, stuck);
}

// The report of a finished run.
InvocationReport report_of(const Program& p, const MessageCounts& counts) {
  InvocationReport r;
  r.invocation = p.inv;
  r.devices = p.n_devices;
  for (const auto& s : p.slots) r.sets.push_back({s.set.name(), s.base, s.set.size(), s.iteration});
  r.counts = counts;
  r.begin = p.r_begin;
  r.end = p.r_end;
  r.execute = p.r_execute;
  r.read_recv = p.r_read_recv;
  r.read_recv_expected = p.read_recv_total;
  for (auto& n : r.read_recv_expected) --n;  // without begin
  r.write_recv = p.r_write_recv;
  r.write_recv_expected = p.write_recv_expected;
  return r;
}

}  // namespace

void MessageExecutor::run(ParLoopBase& loop) {
  if (!sync_) {
    detail::refuse_stale_halos(name(), loop.name(), loop.args());
    run_program(program(loop), loop);
    return;
  }
  const RankLoop share = sync_->begin(loop);
  run_program(program(loop), loop);
  sync_->end(loop, share);
}

void MessageExecutor::run_program(Program& p, ParLoopBase& loop) {
  if (p.args.size() > 64) throw Error::format("par_loop '{}': more than 64 arguments", loop.name());
  if (!team_) team_ = std::make_unique<ThreadTeam>("mesh::messages", options_.threads);
  bind(p, loop);

  Run run(p, options_, *team_);
  run.acc.assign(std::max<std::size_t>(p.end_bytes, 1), 0);
  for (int i : p.reduction_args) {  // INC starts from zero, MIN/MAX from the current value
    const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
    if (a.access != Access::Inc)
      std::memcpy(run.acc.data() + p.end_offset[static_cast<std::size_t>(i)], p.base[static_cast<std::size_t>(i)],
                  a.element_bytes);
  }

  const bool random = options_.random_seed.has_value();
  if (random) run.rng.seed(*options_.random_seed + loop.uid() * 0x9E3779B97F4A7C15ull);
  ActionRoutine routine(random ? "mesh message (random order)" : "mesh message batch",
                        [&run, random](const ActionContext&, DataItem& item) {
                          if (random)
                            run.on_token();
                          else
                            run.on_batch(item);
                        });

  // {inv}_begin to every involved device.
  std::vector<Message> begins(static_cast<std::size_t>(p.n_begun()));
  for (int k = 0; k < p.n_begun(); ++k) {
    Message& m = begins[static_cast<std::size_t>(k)];
    m.kind = MessageKind::Begin;
    m.arg = 0;
    m.dst = p.begun_device(k);
  }
  run.outstanding = static_cast<std::int64_t>(begins.size());
  team_->start_cycle(routine, options_.threads);
  try {
    if (random) {
      run.pool = std::move(begins);
      for (int k = 0; k < p.n_begun(); ++k) team_->enqueue(run.token);
    } else {
      run.send_batches(begins);
    }
  } catch (...) {
    team_->close_queue();
    team_->wait();
    throw;
  }
  {
    std::unique_lock<std::mutex> lock(run.ctl);
    run.ctl_cv.wait(lock, [&] { return run.failed || run.ends == p.n_begun() || run.outstanding.load() == 0; });
  }
  team_->close_queue();
  try {
    team_->wait();
  } catch (const std::exception& e) {
    std::throw_with_nested(Error::format("message-driven executor: invocation '{}' (par_loop '{}') failed: {}", p.inv,
                                         loop.name(), e.what()));
  }
  if (run.failed) std::rethrow_exception(run.error);
  if (run.ends != p.n_begun()) throw stall_error(p, run.ends);
  if (p.end_bytes > 0) run.combine_ends();
  for (int i : p.reduction_args) {  // the controller combines the ends into the globals
    const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
    a.combine(p.base[static_cast<std::size_t>(i)], run.acc.data() + p.end_offset[static_cast<std::size_t>(i)],
              a.access);
  }

  MessageCounts counts;
  counts += run.counts;
  last_ = report_of(p, counts);
  total_ += counts;
}

}  // namespace korch::mesh
