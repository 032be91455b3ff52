// The message-driven executor: compile step, device handlers, controller, dump.
#include <korch/mesh/message_executor.hpp>

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
#include <limits>
#include <mutex>
#include <random>
#include <sstream>
#include <utility>

namespace korch::mesh {

MessageCounts& MessageCounts::operator+=(const MessageCounts& o) noexcept {
  begin += o.begin;
  read_send += o.read_send;
  read_recv += o.read_recv;
  execute += o.execute;
  write_send += o.write_send;
  write_recv += o.write_recv;
  end += o.end;
  early += o.early;
  return *this;
}

namespace {

constexpr std::size_t kPayload = 64;  // bytes a message carries: one dat element, or the INC globals of an end
constexpr std::size_t kAlign = alignof(std::max_align_t);
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kStripes = 4096;  // device locks

std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

enum class Kind : std::uint8_t { Begin, ReadRecv, WriteRecv, End };

struct Message {
  Kind kind;
  std::uint16_t arg;  // ReadRecv: the consuming argument; WriteRecv: the sending argument
  std::int32_t dst;   // device, or -1 for the controller
  alignas(8) unsigned char payload[kPayload];
};

struct MessageBatch final : DataItem {
  std::vector<Message> messages;
  std::string describe() const override { return fmt::format("batch of {} mesh messages", messages.size()); }
};
struct DeliveryToken final : DataItem {
  std::string describe() const override { return "mesh message delivery token"; }
};

// Counts kept by one handler call, added to the run's totals at the end of its queue item.
struct Tally {
  std::uint64_t begin = 0, read_send = 0, read_recv = 0, execute = 0, write_send = 0, write_recv = 0, end = 0, early = 0;
};

}  // namespace

// ------------------------------------------------------------------------------------------------
// compiled invocation
struct MessageExecutor::Program {
  struct SetSlot {
    Set set;
    int base = 0;
    bool iteration = false;
    std::vector<int> read_dats;     // this set's indirect read dats (bit b of the read mask)
    std::uint32_t read_send_mask_all = 0;
    std::uint32_t write_send_mask_all = 0;  // iteration set: one bit per indirect write argument
    std::vector<std::string> dats;  // dats of this set the invocation touches (state members)
    bool write_target = false;
  };
  struct ReadDat {
    std::shared_ptr<detail::DatCore> dat;
    int slot = 0;
    int arg = 0;  // first argument reading it (whose base pointer is the dat's state)
    std::size_t bytes = 0;
    std::vector<int> offsets;                   // per element of its set: consumers[offsets[t]..offsets[t+1])
    std::vector<std::pair<int, int>> consumers; // (iteration element, argument)
  };

  std::string inv;
  std::string loop_name;
  std::vector<ArgInfo> args;
  std::vector<SetSlot> slots;
  int iter_slot = 0;
  int n_devices = 0;
  int n_iter = 0;
  std::vector<ReadDat> read_dats;
  std::vector<int> read_dat_of_arg;  // per argument: its read dat, or -1
  std::vector<int> write_args;       // indirect WRITE/RW/INC arguments (bit order)
  std::vector<int> write_slot_of_arg;
  std::vector<int> reduction_args;   // global INC/MIN/MAX
  std::vector<std::size_t> end_offset;  // per argument: offset in the end payload
  std::size_t end_bytes = 0;
  std::vector<std::size_t> pad_offset;  // per argument: landing pad offset in the device's pad block
  std::size_t pad_stride = 0;
  std::unique_ptr<std::max_align_t[]> pads;

  // properties
  std::vector<int> read_recv_total, write_recv_expected;
  // state
  std::vector<std::uint8_t> in_progress, begun;
  std::vector<int> read_recv_count, write_recv_count;
  std::vector<std::uint32_t> read_send_mask, write_send_mask;
  // records of the current run
  std::vector<int> r_begin, r_end, r_execute, r_read_recv, r_write_recv;

  // per run
  const ParLoopBase* loop = nullptr;
  std::vector<unsigned char*> base;  // per argument: dat host bytes or global bytes
  std::unique_ptr<std::mutex[]> locks{new std::mutex[kStripes]};

  int slot_of(int d) const {
    int s = 0;
    while (s + 1 < static_cast<int>(slots.size()) && d >= slots[static_cast<std::size_t>(s) + 1].base) ++s;
    return s;
  }
  unsigned char* pad(int element, int arg) const {
    return reinterpret_cast<unsigned char*>(pads.get()) + static_cast<std::size_t>(element) * pad_stride +
           pad_offset[static_cast<std::size_t>(arg)];
  }
  std::string device_name(int d) const {
    const int s = slot_of(d);
    return fmt::format("set_{}[{}]", slots[static_cast<std::size_t>(s)].set.name(), d - slots[static_cast<std::size_t>(s)].base);
  }
};

namespace {

using Program = MessageExecutor::Program;

std::unique_ptr<Program> compile(const ParLoopBase& loop, std::string inv) {
  auto p = std::make_unique<Program>();
  p->inv = std::move(inv);
  p->loop_name = loop.name();
  p->args = loop.args();
  const auto& args = p->args;
  const std::size_t na = args.size();
  auto fail = [&](std::size_t i, const std::string& why) {
    return Error::format("message-driven executor: par_loop '{}': argument {} ({}) {}", loop.name(), i,
                         args[i].describe(), why);
  };

  // Sets involved: iteration set first, then indirect read / write sets in argument order.
  auto slot_for = [&](const Set& s) {
    for (std::size_t k = 0; k < p->slots.size(); ++k)
      if (p->slots[k].set == s) return static_cast<int>(k);
    Program::SetSlot slot;
    slot.set = s;
    p->slots.push_back(slot);
    return static_cast<int>(p->slots.size()) - 1;
  };
  p->iter_slot = slot_for(loop.set());
  p->slots[0].iteration = true;
  p->read_dat_of_arg.assign(na, -1);
  p->write_slot_of_arg.assign(na, -1);
  p->pad_offset.assign(na, kNone);
  p->end_offset.assign(na, kNone);
  for (std::size_t i = 0; i < na; ++i) {
    const ArgInfo& a = args[i];
    if (a.is_dat() && a.element_bytes > kPayload) {
      throw fail(i, fmt::format("has {} bytes per element; a message carries at most {}", a.element_bytes, kPayload));
    }
    if (a.is_dat()) {
      auto& names = p->slots[static_cast<std::size_t>(slot_for(a.dat->set()))].dats;
      if (std::find(names.begin(), names.end(), a.dat->name()) == names.end()) names.push_back(a.dat->name());
    }
    if (!a.indirect()) continue;
    const int s = slot_for(a.dat->set());
    if (a.access == Access::Read || a.access == Access::RW) {
      int r = -1;
      for (std::size_t k = 0; k < p->read_dats.size(); ++k)
        if (p->read_dats[k].dat == a.dat) r = static_cast<int>(k);
      if (r < 0) {
        Program::ReadDat rd;
        rd.dat = a.dat;
        rd.slot = s;
        rd.arg = static_cast<int>(i);
        rd.bytes = a.element_bytes;
        p->read_dats.push_back(std::move(rd));
        r = static_cast<int>(p->read_dats.size()) - 1;
        p->slots[static_cast<std::size_t>(s)].read_dats.push_back(r);
      }
      p->read_dat_of_arg[i] = r;
    }
    if (modifies(a.access)) {
      if ((a.access == Access::Write || a.access == Access::RW) && !a.map.injective(a.index)) {
        throw fail(i, fmt::format("is rejected: two elements of '{}' share a target through map '{}'[{}], so their "
                                  "WRITE/RW messages would race; use INC, or a map that is one-to-one at that index",
                                  loop.set().name(), a.map.name(), a.index));
      }
      p->write_args.push_back(static_cast<int>(i));
      p->write_slot_of_arg[i] = s;
      p->slots[static_cast<std::size_t>(s)].write_target = true;
    }
  }
  for (auto& slot : p->slots) {
    if (slot.read_dats.size() > 32) throw Error::format("par_loop '{}': more than 32 indirect read dats on set '{}'", loop.name(), slot.set.name());
    slot.read_send_mask_all = static_cast<std::uint32_t>((std::uint64_t{1} << slot.read_dats.size()) - 1);
  }
  if (p->write_args.size() > 32) throw Error::format("par_loop '{}': more than 32 indirect write arguments", loop.name());
  p->slots[0].write_send_mask_all = static_cast<std::uint32_t>((std::uint64_t{1} << p->write_args.size()) - 1);

  // Landing pads on the iteration set: arg{i}_buffer for indirect arguments, global_{name} for
  // mutable globals. End payload: the reduction globals.
  std::size_t off = 0;
  for (std::size_t i = 0; i < na; ++i) {
    const ArgInfo& a = args[i];
    const bool mutable_global = !a.is_dat() && a.global->kind() == GlobalKind::Mutable;
    if (a.indirect() || mutable_global) {
      p->pad_offset[i] = off;
      off += round_up(a.element_bytes);
    }
    if (!a.is_dat() && modifies(a.access)) {
      p->reduction_args.push_back(static_cast<int>(i));
      p->end_offset[i] = p->end_bytes;
      p->end_bytes += round_up(a.element_bytes);
    }
  }
  if (p->end_bytes > kPayload) {
    throw Error::format("message-driven executor: par_loop '{}': its INC/MIN/MAX globals need {} bytes in {}_end, a "
                        "message carries at most {}",
                        loop.name(), p->end_bytes, p->inv, kPayload);
  }
  p->pad_stride = std::max<std::size_t>(off, 0);

  // Devices: consecutive ranges per set.
  int next = 0;
  for (auto& slot : p->slots) {
    slot.base = next;
    next += slot.set.size();
  }
  p->n_devices = next;
  p->n_iter = loop.set().size();
  const std::size_t nd = static_cast<std::size_t>(p->n_devices);
  if (p->pad_stride > 0) {
    const std::size_t words = (p->pad_stride * static_cast<std::size_t>(p->n_iter) + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
    p->pads.reset(new std::max_align_t[std::max<std::size_t>(words, 1)]);
    std::memset(static_cast<void*>(p->pads.get()), 0, std::max<std::size_t>(words, 1) * sizeof(std::max_align_t));
  }

  // Read edges: consumers per (read dat, element of its set), CSR.
  for (auto& rd : p->read_dats) {
    const int size = p->slots[static_cast<std::size_t>(rd.slot)].set.size();
    rd.offsets.assign(static_cast<std::size_t>(size) + 1, 0);
    for (std::size_t i = 0; i < na; ++i) {
      if (p->read_dat_of_arg[i] < 0 || p->read_dats[static_cast<std::size_t>(p->read_dat_of_arg[i])].dat != rd.dat) continue;
      for (int e = 0; e < p->n_iter; ++e) ++rd.offsets[static_cast<std::size_t>(args[i].map(e, args[i].index)) + 1];
    }
    for (int t = 0; t < size; ++t) rd.offsets[static_cast<std::size_t>(t) + 1] += rd.offsets[static_cast<std::size_t>(t)];
    rd.consumers.resize(static_cast<std::size_t>(rd.offsets.back()));
    std::vector<int> fill(rd.offsets.begin(), rd.offsets.end() - 1);
    for (int e = 0; e < p->n_iter; ++e) {
      for (std::size_t i = 0; i < na; ++i) {
        if (p->read_dat_of_arg[i] < 0 || p->read_dats[static_cast<std::size_t>(p->read_dat_of_arg[i])].dat != rd.dat) continue;
        const int t = args[i].map(e, args[i].index);
        rd.consumers[static_cast<std::size_t>(fill[static_cast<std::size_t>(t)]++)] = {e, static_cast<int>(i)};
      }
    }
  }

  // Device properties.
  p->read_recv_total.assign(nd, 1);  // begin counts as a read
  p->write_recv_expected.assign(nd, 0);
  int n_reads = 0;
  for (std::size_t i = 0; i < na; ++i) n_reads += p->read_dat_of_arg[i] >= 0 ? 1 : 0;
  for (int e = 0; e < p->n_iter; ++e) p->read_recv_total[static_cast<std::size_t>(e)] += n_reads;
  for (int i : p->write_args) {
    const ArgInfo& a = args[static_cast<std::size_t>(i)];
    const int base = p->slots[static_cast<std::size_t>(p->write_slot_of_arg[static_cast<std::size_t>(i)])].base;
    for (int e = 0; e < p->n_iter; ++e) ++p->write_recv_expected[static_cast<std::size_t>(base + a.map(e, a.index))];
  }
  p->in_progress.assign(nd, 0);
  p->begun.assign(nd, 0);
  p->read_recv_count.assign(nd, 0);
  p->write_recv_count.assign(nd, 0);
  p->read_send_mask.assign(nd, 0);
  p->write_send_mask.assign(nd, 0);
  p->r_begin.assign(nd, 0);
  p->r_end.assign(nd, 0);
  p->r_execute.assign(nd, 0);
  p->r_read_recv.assign(nd, 0);
  p->r_write_recv.assign(nd, 0);
  p->base.assign(na, nullptr);
  return p;
}

// ------------------------------------------------------------------------------------------------
// one run of an invocation
struct Run {
  Program& p;
  const MessageOptions& options;
  ThreadTeam& team;

  std::atomic<std::int64_t> outstanding{0};
  std::atomic<std::uint64_t> c_begin{0}, c_read_send{0}, c_read_recv{0}, c_execute{0}, c_write_send{0},
      c_write_recv{0}, c_end{0}, c_early{0};

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
    if (!slot.iteration) return;
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

  void push(std::vector<Message>& out, Kind kind, int dst, int arg, const void* payload, std::size_t bytes) {
    out.emplace_back();
    Message& m = out.back();
    m.kind = kind;
    m.arg = static_cast<std::uint16_t>(arg);
    m.dst = dst;
    if (bytes) std::memcpy(m.payload, payload, bytes);
  }

  void progress(int d, const Program::SetSlot& slot, int element, std::vector<Message>& out, Tally& t) {
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
      const unsigned char* value = p.base[static_cast<std::size_t>(rd.arg)] + static_cast<std::size_t>(element) * rd.bytes;
      ++t.read_send;
      for (int k = rd.offsets[static_cast<std::size_t>(element)]; k < rd.offsets[static_cast<std::size_t>(element) + 1]; ++k) {
        const auto& [e, arg] = rd.consumers[static_cast<std::size_t>(k)];
        push(out, Kind::ReadRecv, p.slots[static_cast<std::size_t>(p.iter_slot)].base + e, arg, value, rd.bytes);
      }
    }
    while (p.write_send_mask[du]) {  // {inv}_arg{i}_write_send
      const int b = __builtin_ctz(p.write_send_mask[du]);
      p.write_send_mask[du] &= ~(std::uint32_t{1} << b);
      const int i = p.write_args[static_cast<std::size_t>(b)];
      const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
      const int target = p.slots[static_cast<std::size_t>(p.write_slot_of_arg[static_cast<std::size_t>(i)])].base + a.map(element, a.index);
      ++t.write_send;
      push(out, Kind::WriteRecv, target, i, p.pad(element, i), a.element_bytes);
    }
    if (p.read_send_mask[du] == 0 && p.write_send_mask[du] == 0 &&
        p.write_recv_count[du] == p.write_recv_expected[du] + 1) {  // {inv}_end
      out.emplace_back();
      Message& m = out.back();
      m.kind = Kind::End;
      m.arg = 0;
      m.dst = -1;
      for (int i : p.reduction_args) {
        const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
        unsigned char* dst = m.payload + p.end_offset[static_cast<std::size_t>(i)];
        if (slot.iteration) std::memcpy(dst, p.pad(element, i), a.element_bytes);
        else if (a.access == Access::Inc) a.zero(dst);
        else std::memcpy(dst, p.base[static_cast<std::size_t>(i)], a.element_bytes);  // MIN/MAX: neutral
      }
      p.write_recv_count[du] = 0;
      p.in_progress[du] = 0;
      p.begun[du] = 0;
      ++p.r_end[du];
    }
  }

  void handle(Message& m, std::vector<Message>& out, Tally& t) {
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
      case Kind::Begin:
        if (p.begun[du]) throw Error::format("invocation '{}': device {} received a second {}_begin", p.inv, p.device_name(d), p.inv);
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
      case Kind::ReadRecv:
        if (!p.begun[du]) ++t.early;
        start(d, slot);
        std::memcpy(p.pad(element, m.arg), m.payload, p.args[m.arg].element_bytes);
        ++p.read_recv_count[du];
        ++p.r_read_recv[du];
        ++t.read_recv;
        break;
      case Kind::WriteRecv: {
        if (!p.begun[du]) ++t.early;
        start(d, slot);
        const ArgInfo& a = p.args[m.arg];
        unsigned char* dst = p.base[m.arg] + static_cast<std::size_t>(element) * a.element_bytes;
        if (a.access == Access::Inc) a.inc(dst, m.payload);
        else std::memcpy(dst, m.payload, a.element_bytes);
        ++p.write_recv_count[du];
        ++p.r_write_recv[du];
        ++t.write_recv;
        break;
      }
      case Kind::End:
        throw Error::format("invocation '{}': device {} received an end message", p.inv, p.device_name(d));
    }
    progress(d, slot, element, out, t);
  }

  // ---- controller side ----
  void controller_end(const Message& m) {
    std::lock_guard<std::mutex> lock(ctl);
    for (int i : p.reduction_args) {
      const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
      a.combine(acc.data() + p.end_offset[static_cast<std::size_t>(i)], m.payload + p.end_offset[static_cast<std::size_t>(i)], a.access);
    }
    if (++ends == p.n_devices) ctl_cv.notify_all();
  }

  void add(const Tally& t) {
    c_begin += t.begin;
    c_read_send += t.read_send;
    c_read_recv += t.read_recv;
    c_execute += t.execute;
    c_write_send += t.write_send;
    c_write_recv += t.write_recv;
    c_end += t.end;
    c_early += t.early;
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
    Tally t;
    try {
      for (Message& m : batch.messages) handle(m, out, t);
    } catch (...) {
      fail(std::current_exception());
      throw;
    }
    add(t);
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
    Tally t;
    try {
      handle(m, out, t);
    } catch (...) {
      fail(std::current_exception());
      throw;
    }
    add(t);
    outstanding.fetch_add(static_cast<std::int64_t>(out.size()), std::memory_order_acq_rel);
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      pool.insert(pool.end(), out.begin(), out.end());
    }
    for (std::size_t k = 0; k < out.size(); ++k) team.enqueue(token);
    settle(0, 1);
  }
};

}  // namespace

// ------------------------------------------------------------------------------------------------
MessageExecutor::MessageExecutor(MessageOptions options) : options_(options) {
  if (options_.threads < 1) throw Error("MessageExecutor: threads must be at least 1");
}

MessageExecutor::~MessageExecutor() = default;

std::string MessageExecutor::name() const {
  if (options_.random_seed) return fmt::format("message-driven ({} threads, random order, seed {})", options_.threads, *options_.random_seed);
  return fmt::format("message-driven ({} threads, batches of {})", options_.threads, options_.batch);
}

MessageExecutor::Program& MessageExecutor::program(const ParLoopBase& loop) {
  auto& slot = programs_[loop.uid()];
  if (!slot) {
    int& uses = names_[loop.name()];
    ++uses;
    std::string inv = uses == 1 ? loop.name() : fmt::format("{}_{}", loop.name(), uses);
    slot = compile(loop, std::move(inv));
  }
  return *slot;
}

std::string MessageExecutor::invocation_name(const ParLoopBase& loop) { return program(loop).inv; }

void MessageExecutor::run(ParLoopBase& loop) {
  Program& p = program(loop);
  if (p.args.size() > 64) throw Error::format("par_loop '{}': more than 64 arguments", loop.name());
  if (!team_) team_ = std::make_unique<ThreadTeam>("mesh::messages", options_.threads);

  // The devices' state is the dats' host copies; constant globals are graph properties.
  p.loop = &loop;
  for (std::size_t i = 0; i < p.args.size(); ++i) {
    const ArgInfo& a = p.args[i];
    p.base[i] = a.is_dat() ? static_cast<unsigned char*>(a.dat->host_bytes(modifies(a.access)))
                           : static_cast<unsigned char*>(a.global->bytes());
  }
  for (auto* v : {&p.r_begin, &p.r_end, &p.r_execute, &p.r_read_recv, &p.r_write_recv}) std::fill(v->begin(), v->end(), 0);

  Run run(p, options_, *team_);
  run.acc.assign(std::max<std::size_t>(p.end_bytes, 1), 0);
  for (int i : p.reduction_args) {  // INC starts from zero, MIN/MAX from the current value
    const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
    if (a.access != Access::Inc) std::memcpy(run.acc.data() + p.end_offset[static_cast<std::size_t>(i)], p.base[static_cast<std::size_t>(i)], a.element_bytes);
  }

  const bool random = options_.random_seed.has_value();
  if (random) run.rng.seed(*options_.random_seed + loop.uid() * 0x9E3779B97F4A7C15ull);
  ActionRoutine routine(random ? "mesh message (random order)" : "mesh message batch",
                        [&run, random](const ActionContext&, DataItem& item) {
                          if (random) run.on_token();
                          else run.on_batch(item);
                        });

  // {inv}_begin to every involved device.
  std::vector<Message> begins(static_cast<std::size_t>(p.n_devices));
  for (int d = 0; d < p.n_devices; ++d) {
    Message& m = begins[static_cast<std::size_t>(d)];
    m.kind = Kind::Begin;
    m.arg = 0;
    m.dst = d;
  }
  run.outstanding = static_cast<std::int64_t>(begins.size());
  team_->start_cycle(routine, options_.threads);
  try {
    if (random) {
      run.pool = std::move(begins);
      for (int d = 0; d < p.n_devices; ++d) team_->enqueue(run.token);
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
    run.ctl_cv.wait(lock, [&] { return run.failed || run.ends == p.n_devices || run.outstanding.load() == 0; });
  }
  team_->close_queue();
  try {
    team_->wait();
  } catch (const std::exception& e) {
    std::throw_with_nested(Error::format("message-driven executor: invocation '{}' (par_loop '{}') failed: {}", p.inv,
                                         loop.name(), e.what()));
  }
  if (run.failed) std::rethrow_exception(run.error);
  if (run.ends != p.n_devices) {
    std::string stuck;
    int shown = 0;
    for (int d = 0; d < p.n_devices && shown < 5; ++d) {
      if (p.r_end[static_cast<std::size_t>(d)] == 1) continue;
      const std::size_t du = static_cast<std::size_t>(d);
      stuck += fmt::format("\n  {}: in_progress={} read_recv_count={}/{} write_recv_count={}/{}+1 read_send_mask={:#x} write_send_mask={:#x}",
                           p.device_name(d), p.in_progress[du], p.read_recv_count[du], p.read_recv_total[du],
                           p.write_recv_count[du], p.write_recv_expected[du], p.read_send_mask[du], p.write_send_mask[du]);
      ++shown;
    }
    throw Error::format("message-driven executor: invocation '{}' stalled: {} of {} devices sent {}_end and no message "
                        "is in flight; first devices still waiting:{}",
                        p.inv, run.ends, p.n_devices, p.inv, stuck);
  }
  for (int i : p.reduction_args) {  // the controller combines the ends into the globals
    const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
    a.combine(p.base[static_cast<std::size_t>(i)], run.acc.data() + p.end_offset[static_cast<std::size_t>(i)], a.access);
  }

  last_.invocation = p.inv;
  last_.devices = p.n_devices;
  last_.sets.clear();
  for (const auto& s : p.slots) last_.sets.push_back({s.set.name(), s.base, s.set.size(), s.iteration});
  MessageCounts c;
  c.begin = run.c_begin;
  c.read_send = run.c_read_send;
  c.read_recv = run.c_read_recv;
  c.execute = run.c_execute;
  c.write_send = run.c_write_send;
  c.write_recv = run.c_write_recv;
  c.end = run.c_end;
  c.early = run.c_early;
  last_.counts = c;
  total_ += c;
  last_.begin = p.r_begin;
  last_.end = p.r_end;
  last_.execute = p.r_execute;
  last_.read_recv = p.r_read_recv;
  last_.read_recv_expected = p.read_recv_total;
  for (auto& r : last_.read_recv_expected) --r;  // without begin
  last_.write_recv = p.r_write_recv;
  last_.write_recv_expected = p.write_recv_expected;
}

// ------------------------------------------------------------------------------------------------
std::string MessageExecutor::dump(const ParLoopBase& loop, std::size_t max_items) {
  const Program& p = program(loop);
  std::ostringstream o;
  const std::string& inv = p.inv;
  o << fmt::format("device graph of invocation '{}' (par_loop '{}' over set '{}'): {} devices, {} device types + global\n",
                   inv, p.loop_name, p.slots[0].set.name(), p.n_devices, p.slots.size());
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

  for (const auto& s : p.slots) {
    const std::string& sn = s.set.name();
    o << fmt::format("device type set_{} ({} devices{}{}{}):\n", sn, s.set.size(), s.iteration ? ", iteration set" : "",
                     s.read_dats.empty() ? "" : ", indirect read set", s.write_target ? ", indirect write set" : "");
    o << "  state:";
    for (const auto& d : s.dats) o << fmt::format(" set_{}::dat_{}", sn, d);
    if (s.iteration) {
      for (std::size_t i = 0; i < p.args.size(); ++i) {
        const ArgInfo& a = p.args[i];
        if (a.indirect()) o << fmt::format(" {}_arg{}_buffer : {}[{}]", inv, i, a.scalar, a.dim);
        else if (!a.is_dat() && a.global->kind() == GlobalKind::Mutable) o << fmt::format(" global_{} : {}[{}]", a.global->name(), a.scalar, a.dim);
      }
    }
    o << fmt::format(" {0}_in_progress {0}_read_recv_count {0}_write_recv_count {0}_read_send_mask {0}_write_send_mask\n", inv);
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
    for (int r : s.read_dats) o << fmt::format(", {}_dat_{}_read_send", inv, p.read_dats[static_cast<std::size_t>(r)].dat->name());
    if (s.iteration) {
      o << fmt::format(", {}_execute", inv);
      for (int i : p.write_args) o << fmt::format(", {}_arg{}_write_send", inv, i);
    }
    o << "\n";
  }

  o << "devices:\n";
  for (const auto& s : p.slots) {
    const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(s.set.size()), max_items);
    for (std::size_t e = 0; e < n; ++e) {
      const std::size_t d = static_cast<std::size_t>(s.base) + e;
      o << fmt::format("  set_{}[{}]: {}_read_recv_total = {}, {}_write_recv_expected = {}\n", s.set.name(), e, inv,
                       p.read_recv_total[d], inv, p.write_recv_expected[d]);
    }
    if (static_cast<std::size_t>(s.set.size()) > n) o << fmt::format("  ... {} more set_{} devices\n", static_cast<std::size_t>(s.set.size()) - n, s.set.name());
  }

  o << "edges:\n";
  const std::string iter = p.slots[0].set.name();
  for (const auto& rd : p.read_dats) {
    const std::string& sn = p.slots[static_cast<std::size_t>(rd.slot)].set.name();
    std::size_t shown = 0;
    for (std::size_t t = 0; t + 1 < rd.offsets.size() && shown < max_items; ++t)
      for (int k = rd.offsets[t]; k < rd.offsets[t + 1] && shown < max_items; ++k, ++shown) {
        const auto& [e, arg] = rd.consumers[static_cast<std::size_t>(k)];
        o << fmt::format("  set_{}[{}].{}_dat_{}_read_send -> set_{}[{}].{}_arg{}_read_recv\n", sn, t, inv, rd.dat->name(), iter, e, inv, arg);
      }
    o << fmt::format("  ({} read edges from {}_dat_{}_read_send)\n", rd.consumers.size(), inv, rd.dat->name());
  }
  for (int i : p.write_args) {
    const ArgInfo& a = p.args[static_cast<std::size_t>(i)];
    const std::string& tn = a.dat->set().name();
    const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(p.n_iter), max_items);
    for (std::size_t e = 0; e < n; ++e)
      o << fmt::format("  set_{}[{}].{}_arg{}_write_send -> set_{}[{}].{}_dat_{}_write_recv ({})\n", iter, e, inv, i, tn,
                       a.map(static_cast<int>(e), a.index), inv, a.dat->name(), to_string(a.access));
    o << fmt::format("  ({} write edges from {}_arg{}_write_send)\n", p.n_iter, inv, i);
  }
  o << fmt::format("  ({0} begin edges global.{1}_begin -> *.{1}_begin, {0} end edges *.{1}_end -> global.{1}_end)\n", p.n_devices, inv);
  return o.str();
}

}  // namespace korch::mesh
