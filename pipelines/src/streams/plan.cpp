// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/streams/plan.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace korch::streams {

Layout::Layout(const Comp& program, unsigned threads) : threads_(threads) {
  if (threads == 0) throw Error("stream layout: 0 scheduler threads; give at least 1");
  root_ = build(program, false);
  // Threads: standalone tasks first get a thread each while at least one thread is left for the
  // rest; the others are spread round robin over the remaining threads.
  unsigned n_standalone = 0;
  for (const auto& t : tasks_) n_standalone += t.standalone ? 1 : 0;
  if (n_standalone > 0 && n_standalone >= threads) {
    warnings_.push_back(
        fmt::format("stream program: {} standalone components but {} scheduler threads; they share threads "
                    "(give the executor at least {} threads for each to have its own)",
                    n_standalone, threads, n_standalone + 1));
  }
  const unsigned dedicated = n_standalone < threads ? n_standalone : 0;
  unsigned next_alone = 0, next_shared = 0;
  for (auto& t : tasks_) {
    if (t.standalone && dedicated > 0) {
      t.thread = next_alone++;
    } else {
      t.thread = dedicated + (next_shared++ % (threads - dedicated));
    }
  }
  map_ = make_map(*root_);
  plan_.initially_active = initial_tasks(*root_);
  make_plan(*root_, {});
}

std::unique_ptr<Unit> Layout::build(const Comp& c, bool alone) {
  const Node& n = c.node();
  auto u = std::make_unique<Unit>();
  u->comp = c;
  if (!c.has_barrier() || (n.op == Op::Standalone && !n.a.has_barrier())) {
    u->kind = Unit::Task;
    u->standalone = alone || n.op == Op::Standalone;
    u->task = static_cast<TaskId>(tasks_.size());
    tasks_.push_back(TaskInfo{u->task, to_string(c), c.is_computer(), u->standalone, 0, u.get()});
    return u;
  }
  switch (n.op) {
    case Op::Standalone: return build(n.a, true);
    case Op::Pipe:
    case Op::ParPipe: {
      u->kind = Unit::Pipeline;
      flatten(c, alone, u->children);
      Cards cards;
      bool known = true;
      for (std::size_t i = 0; i < u->children.size(); ++i) {
        const Comp& s = u->children[i]->comp;
        if (s.is_computer()) {
          u->computer_stage = static_cast<int>(i);
          break;
        }
        auto cs = s.cards();
        if (!cs)
          known = false;
        else
          cards.insert(cards.end(), cs->begin(), cs->end());
      }
      if (u->computer_stage > 0 && known) u->commit_cards = cards;
      if (u->computer_stage == 0) u->commit_cards = Cards{};
      return u;
    }
    case Op::Bind:
      u->kind = Unit::Bind;
      u->children.push_back(build(n.a, alone));
      u->children.push_back(build(n.b, alone));
      return u;
    case Op::Repeat:
    case Op::Times:
    case Op::Until:
      u->kind = Unit::Loop;
      u->children.push_back(build(n.a, alone));
      return u;
    case Op::If:
      u->kind = Unit::If;
      u->children.push_back(build(n.a, alone));
      u->children.push_back(build(n.b, alone));
      return u;
    default: break;
  }
  throw Error::format("stream layout: '{}' ({}) has a barrier but no structure", n.name, to_string(n.op));
}

void Layout::flatten(const Comp& c, bool alone, std::vector<std::unique_ptr<Unit>>& stages) {
  const Node& n = c.node();
  if ((n.op == Op::Pipe || n.op == Op::ParPipe) && c.has_barrier()) {
    flatten(n.a, alone, stages);
    flatten(n.b, alone, stages);
  } else {
    stages.push_back(build(c, alone));
  }
}

ExecutionMap Layout::make_map(const Unit& u) const {
  ExecutionMap m;
  switch (u.kind) {
    case Unit::Task:
      m.kind = ExecutionMap::Atom;
      m.task = u.task;
      return m;
    case Unit::Pipeline: m.kind = ExecutionMap::Par; break;
    case Unit::Bind: m.kind = ExecutionMap::Seq; break;
    case Unit::Loop: m.kind = ExecutionMap::Repeat; break;
    case Unit::If: m.kind = ExecutionMap::Alt; break;
  }
  for (const auto& ch : u.children) {
    ExecutionMap cm = make_map(*ch);
    if (m.kind == ExecutionMap::Seq && cm.kind == ExecutionMap::Seq) {
      for (auto& g : cm.children) m.children.push_back(std::move(g));
    } else {
      m.children.push_back(std::move(cm));
    }
  }
  return m;
}

std::set<TaskId> initial_tasks(const Unit& u) {
  std::set<TaskId> s;
  switch (u.kind) {
    case Unit::Task: s.insert(u.task); break;
    case Unit::Pipeline:
      for (const auto& ch : u.children) {
        auto c = initial_tasks(*ch);
        s.insert(c.begin(), c.end());
      }
      break;
    case Unit::Bind:
    case Unit::Loop: s = initial_tasks(*u.children[0]); break;
    case Unit::If:
      s = initial_tasks(*u.children[0]);
      for (TaskId t : initial_tasks(*u.children[1])) s.insert(t);
      break;
  }
  return s;
}

TaskId first_task_of(const Unit& u) { return u.kind == Unit::Task ? u.task : first_task_of(*u.children.front()); }
TaskId last_task_of(const Unit& u) {
  switch (u.kind) {
    case Unit::Task: return u.task;
    case Unit::Pipeline: return last_task_of(*u.children.back());
    default: return last_task_of(*u.children.front());
  }
}

namespace {
// The computer tasks that end unit u, and the pipeline whose first/last tasks they wait for.
void enders(const Unit& u, std::vector<TaskId>& out) {
  switch (u.kind) {
    case Unit::Task:
      if (u.comp.is_computer()) out.push_back(u.task);
      break;
    case Unit::Pipeline:
      if (u.computer_stage >= 0) enders(*u.children[static_cast<std::size_t>(u.computer_stage)], out);
      break;
    case Unit::Bind: enders(*u.children[1], out); break;
    case Unit::Loop: enders(*u.children[0], out); break;
    case Unit::If:
      enders(*u.children[0], out);
      enders(*u.children[1], out);
      break;
  }
}
}  // namespace

void Layout::make_plan(const Unit& u, const std::set<TaskId>& cont) {
  switch (u.kind) {
    case Unit::Task:
      if (u.comp.is_computer()) {
        plan_.continuations[u.task].insert(cont.begin(), cont.end());
        plan_.first_task.emplace(u.task, u.task);
        plan_.last_task.emplace(u.task, u.task);
      }
      break;
    case Unit::Pipeline: {
      for (std::size_t i = 0; i < u.children.size(); ++i) {
        const bool is_comp = static_cast<int>(i) == u.computer_stage;
        make_plan(*u.children[i], is_comp ? cont : std::set<TaskId>{});
      }
      std::vector<TaskId> e;
      if (u.computer_stage >= 0) enders(*u.children[static_cast<std::size_t>(u.computer_stage)], e);
      for (TaskId t : e) {
        plan_.first_task[t] = first_task_of(*u.children.front());
        plan_.last_task[t] = last_task_of(*u.children.back());
      }
      break;
    }
    case Unit::Bind:
      make_plan(*u.children[0], initial_tasks(*u.children[1]));
      make_plan(*u.children[1], cont);
      break;
    case Unit::Loop: {
      std::set<TaskId> c = initial_tasks(*u.children[0]);
      if (u.comp.node().op != Op::Repeat) c.insert(cont.begin(), cont.end());
      make_plan(*u.children[0], c);
      break;
    }
    case Unit::If:
      make_plan(*u.children[0], cont);
      make_plan(*u.children[1], cont);
      break;
  }
}

std::vector<unsigned> Layout::tasks_per_thread() const {
  std::vector<unsigned> n(threads_, 0);
  for (const auto& t : tasks_) ++n[t.thread];
  return n;
}

std::string ExecutionMap::text() const {
  if (kind == Atom) return fmt::format("Atom {}", task);
  static const char* names[] = {"Seq", "Par", "Repeat", "Atom", "Alt"};
  std::string s = std::string(names[kind]) + " [";
  for (std::size_t i = 0; i < children.size(); ++i) s += (i ? ", " : "") + children[i].text();
  return s + "]";
}

namespace {
std::string set_text(const std::set<TaskId>& s) {
  std::string r = "{";
  bool first = true;
  for (TaskId t : s) {
    r += fmt::format("{}{}", first ? "" : ", ", t);
    first = false;
  }
  return r + "}";
}
}  // namespace

std::string Plan::text() const {
  std::string s = "initially active: " + set_text(initially_active) + "\n";
  for (const auto& [t, c] : continuations) {
    s += fmt::format("task {}: continuations {}, first {}, last {}\n", t, set_text(c), first_task.at(t),
                     last_task.at(t));
  }
  return s;
}

std::string Layout::dot() const {
  std::string s = "digraph stream_program {\n  rankdir=LR;\n";
  for (unsigned th = 0; th < threads_; ++th) {
    s += fmt::format("  subgraph cluster_thread{} {{\n    label=\"thread {}\";\n", th, th);
    for (const auto& t : tasks_) {
      if (t.thread != th) continue;
      std::string label = t.name;
      std::replace(label.begin(), label.end(), '"', '\'');
      s += fmt::format("    t{} [label=\"{}: {}\" shape={}];\n", t.id, t.id, label, t.computer ? "box" : "ellipse");
    }
    s += "  }\n";
  }
  // data edges between consecutive pipeline stages
  std::vector<const Unit*> stack{root_.get()};
  while (!stack.empty()) {
    const Unit* u = stack.back();
    stack.pop_back();
    if (u->kind == Unit::Pipeline) {
      for (std::size_t i = 0; i + 1 < u->children.size(); ++i) {
        s += fmt::format("  t{} -> t{};\n", last_task_of(*u->children[i]), first_task_of(*u->children[i + 1]));
      }
    }
    for (const auto& ch : u->children) stack.push_back(ch.get());
  }
  for (const auto& [t, c] : plan_.continuations) {
    for (TaskId n : c) s += fmt::format("  t{} -> t{} [style=dashed label=\"done\"];\n", t, n);
  }
  return s + "}\n";
}

}  // namespace korch::streams
