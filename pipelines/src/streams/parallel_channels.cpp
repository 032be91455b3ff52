// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parallel executor's channels: the queue kinds between stages, and the static checks that every
// commit queue can be committed (declared cardinalities, capacity at least minQSize).
#include "parallel_internals.hpp"

#include <korch/error.hpp>

#include <fmt/format.h>

namespace korch::streams::detail {

bool needs_commit(const Unit& unit) {
  switch (unit.kind) {
    case Unit::Task: return false;
    case Unit::Pipeline: return needs_commit(*unit.children.front());
    default: return true;
  }
}

std::string channel_name(const Unit& from, const Unit& to) {
  return fmt::format("{} -> {}", from.comp.name(), to.comp.name());
}

std::size_t commit_capacity(const ParallelOptions& options) {
  return options.commit_queue_capacity ? options.commit_queue_capacity : options.queue_capacity;
}

Channel::Channel(std::string name, Kind kind, std::size_t capacity, std::vector<Item>* sink)
    : kind_(kind), sink_(sink), name_(std::move(name)) {
  if (kind == Spsc) ring_ = std::make_unique<SpscRing<Item>>(name_, capacity);
  if (kind == Commit) commit_queue_ = std::make_unique<CommitQueue<Item>>(name_, capacity);
}

bool Channel::push(Item x) {
  switch (kind_) {
    case Spsc: return ring_->try_push(x);
    case Commit: return commit_queue_->try_write(x);
    case Sink: sink_->push_back(x); return true;
  }
  return false;
}

bool Channel::pop(Item& x) {
  switch (kind_) {
    case Spsc: return ring_->try_pop(x);
    case Commit: return commit_queue_->try_read(x);
    case Sink: break;
  }
  throw Error::format("stream queue '{}' is the program's output; nothing reads it", name_);
}

namespace {

std::string cards_text(const Cards& cards) {
  std::string s;
  for (const auto& c : cards) s += fmt::format("{}{}/{}", s.empty() ? "" : ", ", c.in, c.out);
  return s.empty() ? "none" : s;
}

// A pipeline reading a commit queue: its computer counts the takes to commit, which needs a leaf
// computer stage, declared cardinalities before it and room for one take's uncommitted reads.
void check_commit_counting(const Unit& pipeline, const std::string& in_name, const ParallelOptions& options) {
  const Unit& computer = *pipeline.children[static_cast<std::size_t>(pipeline.computer_stage)];
  if (computer.kind != Unit::Task) {
    throw Error::format(
        "stream pipeline '{}': its computer stage '{}' contains a barrier, so nobody can count the "
        "takes to commit on queue '{}'; move the |>>>| or standalone out of that stage",
        pipeline.comp.name(), computer.comp.name(), in_name);
  }
  if (!pipeline.commit_cards) {
    throw Error::format(
        "stream pipeline '{}': the stages before computer '{}' do not all declare a cardinality, so "
        "the commits on queue '{}' cannot be computed; build them from leaf transformers (n/m)",
        pipeline.comp.name(), computer.comp.name(), in_name);
  }
  const std::uint64_t need = min_qsize(*pipeline.commit_cards);
  if (commit_capacity(options) < need) {
    throw Error::format(
        "commit queue '{}' has capacity {}, below minQSize {} of pipeline '{}' (cardinalities {} "
        "before computer '{}'): one take by the computer may need {} uncommitted reads, so the "
        "pipeline would deadlock; configure commit_queue_capacity >= {}",
        in_name, commit_capacity(options), need, pipeline.comp.name(), cards_text(*pipeline.commit_cards),
        computer.comp.name(), need, need);
  }
}

}  // namespace

void check_unit(const Unit& unit, bool commit_in, const std::string& in_name, const ParallelOptions& options) {
  switch (unit.kind) {
    case Unit::Task: return;
    case Unit::Pipeline: {
      if (commit_in && unit.computer_stage > 0) check_commit_counting(unit, in_name, options);
      for (std::size_t i = 0; i < unit.children.size(); ++i) {
        if (i == 0) {
          check_unit(*unit.children[0], commit_in, in_name, options);
        } else {
          check_unit(*unit.children[i], needs_commit(*unit.children[i]),
                     channel_name(*unit.children[i - 1], *unit.children[i]), options);
        }
      }
      return;
    }
    default:
      for (const auto& child : unit.children) check_unit(*child, true, in_name, options);
  }
}

}  // namespace korch::streams::detail
