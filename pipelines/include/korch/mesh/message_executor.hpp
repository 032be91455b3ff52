// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::MessageExecutor: par_loops as message-driven devices, exactly the message protocol
// (POETS). Per loop (an "invocation") a compile step, done once and cached, derives
//   * the devices: every element of every set involved (the iteration set, the indirect read sets,
//     the indirect write sets), device type "set_{name}", its dats as state "dat_{name}";
//   * the indirect read dats (READ/RW through a map) with their consumers, the indirect write
//     arguments (WRITE/RW/INC through a map) with their targets;
//   * per device the properties {inv}_read_recv_total (reads expected, begin included) and
//     {inv}_write_recv_expected; per device type the masks {inv}_{set}_read_send_mask_all and
//     {inv}_{set}_write_send_mask_all; on the iteration set the landing pads {inv}_arg{i}_buffer
//     and global_{name}; the state {inv}_in_progress, _read_recv_count, _write_recv_count,
//     _read_send_mask, _write_send_mask.
// Running it: the controller (the "global" device) sends {inv}_begin to every device; each
// device, on its first message of the invocation (begin, a read_recv or a write_recv may come
// first), goes in_progress and broadcasts its indirect read dats ({inv}_dat_{d}_read_send, one send
// fanned out to every {inv}_arg{i}_read_recv that consumes it); once begin and all reads are in it
// executes (INC landing pads and INC global pads zeroed first; direct INC never zeroed), sends
// {inv}_arg{i}_write_send to each target's {inv}_dat_{d}_write_recv (WRITE/RW copy; INC lands in
// the target's inbox, one slot per sender and argument), and once executed, everything sent and
// write_recv_expected writes received, adds its inbox in sender order (ascending element, then
// argument) and sends {inv}_end with its INC/MIN/MAX global pads (zeros / the current value from
// non-iteration devices). The controller keeps every device's end, combines them in device order
// and returns only after every device's end, so the next invocation starts after. Neither message
// timing nor the number of ranks changes a result's bits (docs/mesh.md, "Ranks").
//
// Messages travel as korch thread-team items (batches of messages) and are handled by the team's
// threads; devices are locked one at a time. Test mode (random_seed set) keeps every message in one
// pool and each team item delivers a message drawn at random (seeded; reproducible with 1 thread),
// so reads and writes overtake begin.
//
// Kernels run on the host (the dats' host copies). Run from one thread at a time.
#pragma once

#include <korch/mesh/executor.hpp>
#include <korch/mesh/partition.hpp>
#include <korch/mesh/rank_sync.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace korch {
class ThreadTeam;
}

namespace korch::mesh {

struct MessageOptions {
  unsigned threads = 2;                      // team threads handling messages
  std::size_t batch = 256;                   // messages per queue item (in-order delivery)
  std::optional<std::uint64_t> random_seed;  // set: random-order delivery (test mode)
};

// What one invocation did, summed over devices. Counter is std::uint64_t for reports
// (MessageCounts); the executor also keeps one with atomic counters that its handler threads add
// their counts to.
template <class Counter>
struct MessageCounters {
  Counter begin{0};       // {inv}_begin delivered (controller -> device)
  Counter read_send{0};   // {inv}_dat_{d}_read_send events (one per device and read dat)
  Counter read_recv{0};   // {inv}_arg{i}_read_recv delivered
  Counter execute{0};     // {inv}_execute run (every involved device runs it once)
  Counter write_send{0};  // {inv}_arg{i}_write_send
  Counter write_recv{0};  // {inv}_dat_{d}_write_recv delivered
  Counter end{0};         // {inv}_end delivered (device -> controller)
  Counter early{0};       // read_recv / write_recv that reached a device before its begin
  // Messages delivered: begin + read_recv + write_recv + end.
  std::uint64_t delivered() const noexcept { return begin + read_recv + write_recv + end; }
  template <class Other>
  MessageCounters& operator+=(const MessageCounters<Other>& o) noexcept {
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
};
using MessageCounts = MessageCounters<std::uint64_t>;

// Per device record of the last invocation (device d of set s is sets[s].base + element).
struct InvocationReport {
  std::string invocation;
  struct SetRange {
    std::string set;
    int base = 0;
    int size = 0;
    bool iteration = false;
  };
  std::vector<SetRange> sets;
  int devices = 0;
  MessageCounts counts;
  std::vector<int> begin, end, execute, read_recv, read_recv_expected, write_recv, write_recv_expected;
};

class MessageExecutor final : public Executor {
 public:
  explicit MessageExecutor(MessageOptions options = {});
  // On the partition's ranks (the partition must outlive the executor): every element of every set
  // involved is still a device, but only the iteration elements of this rank's share execute and
  // send (owned ones, plus the execute halo when the loop modifies a dat through a map), only owned
  // ones reduce into globals, and a RankSync (rank_sync.hpp) refreshes halos and reduces over the
  // ranks around each run, which is collective. On one rank it is the plain executor.
  explicit MessageExecutor(const Partition& partition, MessageOptions options = {});
  ~MessageExecutor() override;
  MessageExecutor(const MessageExecutor&) = delete;
  MessageExecutor& operator=(const MessageExecutor&) = delete;

  std::string name() const override;
  void run(ParLoopBase& loop) override;

  // The halo refreshes, reductions and gather() on ranks; null without a partition.
  RankSync* sync() noexcept { return sync_.get(); }

  // The counts of the last run() and their running total since construction / reset_counts().
  const InvocationReport& last_report() const noexcept { return last_; }
  const MessageCounts& total_counts() const noexcept { return total_; }
  void reset_counts() noexcept { total_ = MessageCounts{}; }

  // Text of the compiled device graph of a loop (compiles it if needed): graph properties, device
  // types with pins, state and properties, devices with their properties, and edges (at most
  // max_items devices and edges of each kind are listed, with the totals).
  std::string dump(const ParLoopBase& loop, std::size_t max_items = 16);
  // The invocation name the loop got (its name, uniquified if another loop had it).
  std::string invocation_name(const ParLoopBase& loop);

  struct Program;  // compiled invocation (src/mesh/message_program.hpp)

 private:
  Program& program(const ParLoopBase& loop);
  void run_program(Program& p, ParLoopBase& loop);

  MessageOptions options_;
  std::unique_ptr<RankSync> sync_;
  std::unique_ptr<ThreadTeam> team_;
  std::map<std::uint64_t, std::unique_ptr<Program>> programs_;
  std::map<std::string, int> names_;
  InvocationReport last_;
  MessageCounts total_;
};

}  // namespace korch::mesh
