// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Execution maps and plans.
//
// Task merging: every maximal barrier-free subtree becomes one task (its components run merged, in
// one tick/process instance). Barriers are `|>>>|` and `standalone`; a pipe, bind, loop or
// conditional containing a barrier is not merged but becomes structure:
//   Layout unit   map          meaning
//   Task          Atom t       one task
//   Pipeline      Par [...]    stages running concurrently (a >>> or |>>>| chain with a barrier, flattened)
//   Bind          Seq [...]    c1 then c2
//   Loop          Repeat m     repeat / times / until
//   If            Alt [a, b]   one of the branches (an extension: the seed's four constructors
//                               cannot express a conditional)
// The plan lists, per computer task, the tasks to activate when it finishes (continuations), the
// first and last task of the pipeline it ends (which must stop before its input is rolled back and
// the continuations start), and the initially active tasks. Each task also gets a scheduler thread:
// standalone tasks a thread of their own while threads remain, the others round robin.
#pragma once

#include <korch/streams/program.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace korch::streams {

using TaskId = int;

struct Unit {
  enum Kind { Task, Pipeline, Bind, Loop, If } kind = Task;
  Comp comp;
  TaskId task = -1;                             // Task
  bool standalone = false;                      // Task: inside standalone()
  std::vector<std::unique_ptr<Unit>> children;  // Pipeline: stages; Bind: c1, c2; Loop: body; If: a, b
  int computer_stage = -1;                      // Pipeline: the stage that is a computer, -1 for none
  std::optional<Cards> commit_cards;            // Pipeline: cardinalities of the stages before computer_stage
};

struct TaskInfo {
  TaskId id = -1;
  std::string name;  // the merged subtree, as to_string
  bool computer = false;
  bool standalone = false;
  unsigned thread = 0;
  const Unit* unit = nullptr;
};

class ExecutionMap {
 public:
  enum Kind { Seq, Par, Repeat, Atom, Alt } kind = Atom;
  TaskId task = -1;
  std::vector<ExecutionMap> children;
  std::string text() const;  // e.g. "Seq [Par [Atom 0, Atom 1], Atom 2]"
};

struct Plan {
  std::map<TaskId, std::set<TaskId>> continuations;  // per computer task
  std::map<TaskId, TaskId> first_task;               // per computer task
  std::map<TaskId, TaskId> last_task;                // per computer task
  std::set<TaskId> initially_active;
  std::string text() const;
};

// The static analysis of one program for a given number of scheduler threads.
class Layout {
 public:
  Layout(const Comp& program, unsigned threads);
  const Unit& root() const { return *root_; }
  const std::vector<TaskInfo>& tasks() const { return tasks_; }
  const ExecutionMap& map() const { return map_; }
  const Plan& plan() const { return plan_; }
  unsigned threads() const { return threads_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Maximum number of tasks any thread holds at once is bounded by its task count:
  std::vector<unsigned> tasks_per_thread() const;
  // Graphviz: tasks as nodes clustered by thread, data edges inside pipelines, dashed continuation edges.
  std::string dot() const;

 private:
  std::unique_ptr<Unit> build(const Comp& c, bool standalone);
  void flatten(const Comp& c, bool standalone, std::vector<std::unique_ptr<Unit>>& stages);
  ExecutionMap make_map(const Unit& u) const;
  void make_plan(const Unit& u, const std::set<TaskId>& cont);
  std::unique_ptr<Unit> root_;
  std::vector<TaskInfo> tasks_;
  ExecutionMap map_;
  Plan plan_;
  unsigned threads_;
  std::vector<std::string> warnings_;
};

std::set<TaskId> initial_tasks(const Unit& u);
TaskId first_task_of(const Unit& u);
TaskId last_task_of(const Unit& u);

}  // namespace korch::streams
