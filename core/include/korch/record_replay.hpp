// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Record/replay: a Recorder attached to the Runtime captures the
// configuration, the state of every team when the cycle starts, the distributor's pushes and the
// order in which every team and helper started its items (one global sequence). replay() runs the
// recorded configuration again on the calling thread, one task at a time in exactly the recorded
// global order (same routines, same helpers, same pools), so a run that misbehaved can be repeated
// deterministically under a debugger, and low-level behaviour can be tested directly.
#pragma once

#include <korch/data_item.hpp>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace korch {

class Bundle;
class DataSource;
class Runtime;

// A stable name for an item across runs ("tile 3.1", "block 3", "metadata 3",
// "packet_of_blocks[0,1]", "packet_of_tiles[0.0,0.1]").
std::string item_key(const DataItem& item);

struct RecordedTeamState {
  std::string name;
  std::string mode;  // at the start of the cycle (Idle)
  unsigned n_max = 0;
  unsigned initial_threads = 0;
};
struct RecordedPush {
  std::string pipeline;
  std::string item;
};
struct RecordedTask {
  std::uint64_t sequence = 0;
  std::string node;
  std::string item;
  unsigned thread = 0;
};

struct Recording {
  std::string configuration;  // Configuration::to_json()
  std::vector<RecordedTeamState> teams;
  std::vector<RecordedPush> pushes;
  std::vector<RecordedTask> tasks;  // by sequence

  // Item keys that `node` started, in order.
  std::vector<std::string> order_of(const std::string& node) const;
  std::string to_json() const;
  static Recording from_json(const std::string& text);
};

class Recorder {
 public:
  void begin(std::string configuration, std::vector<RecordedTeamState> teams);
  void push(const std::string& pipeline, const DataItem& item);
  void task(const std::string& node, const DataItem& item, unsigned thread);
  Recording recording() const;  // tasks sorted by sequence

 private:
  mutable std::mutex mutex_;
  std::atomic<std::uint64_t> sequence_{0};
  Recording recording_;
};

// Replays `recording` with `bundle` on `grid` using the runtime's pools, on the calling thread.
// Returns the replay's own recording (its task order equals the recorded one). Throws korch::Error
// when the replay diverges (an item the recording names is not waiting at its node).
Recording replay(const Recording& recording, const Bundle& bundle, DataSource& grid, Runtime& runtime);

}  // namespace korch
