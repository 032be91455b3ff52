// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam: publishers and subscribers between teams, and observation of a team.
#include <korch/thread_team.hpp>

#include "thread_team_internals.hpp"

#include <korch/excerpt.hpp>

#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace korch {

using detail::describe_item;
using detail::lock_briefly_spinning;
using detail::message_of;

// ---------------------------------------------------------------------------------------------
// Publishers and subscribers

void ThreadTeam::Impl::attach_work_subscriber(ThreadTeam::Impl& subscriber) {
  if (&subscriber == this) {
    throw Error::format("team '{}' cannot be its own work subscriber: a team never publishes to itself", name_);
  }
  std::lock_guard<std::mutex> topology(topology_mutex());
  std::scoped_lock both(mutex_, subscriber.mutex_);
  require_quiescent_idle("attach_work_subscriber");
  subscriber.require_quiescent_idle("becoming a work subscriber");
  if (work_subscriber_ != nullptr) {
    throw Error::format("team '{}' already has work subscriber '{}': a team has at most one; detach it first", name_,
                        work_subscriber_->name_);
  }
  // Every link change holds the topology mutex, so the chain can be followed under it alone.
  for (const ThreadTeam::Impl* t = &subscriber; t != nullptr; t = t->work_subscriber_) {
    if (t == this) {
      throw Error::format(
          "team '{}' cannot publish work to '{}': '{}' already passes its items on to '{}', "
          "and a cycle of work publishers would never close",
          name_, subscriber.name_, subscriber.name_, name_);
    }
  }
  work_subscriber_ = &subscriber;
  subscriber.work_publishers_.push_back(PublisherLink{this, false});
}

void ThreadTeam::Impl::detach_work_subscriber() {
  std::lock_guard<std::mutex> topology(topology_mutex());
  ThreadTeam::Impl* const subscriber = work_subscriber_;
  if (subscriber == nullptr) return;
  std::scoped_lock both(mutex_, subscriber->mutex_);
  require_quiescent_idle("detach_work_subscriber");
  subscriber->require_quiescent_idle("losing a work publisher");
  auto& pubs = subscriber->work_publishers_;
  pubs.erase(std::remove_if(pubs.begin(), pubs.end(), [this](const PublisherLink& l) { return l.team == this; }),
             pubs.end());
  work_subscriber_ = nullptr;
}

void ThreadTeam::Impl::attach_thread_subscriber(ThreadTeam::Impl& subscriber) {
  if (&subscriber == this) {
    throw Error::format("team '{}' cannot be its own thread subscriber: a team never publishes to itself", name_);
  }
  std::lock_guard<std::mutex> topology(topology_mutex());
  std::scoped_lock both(mutex_, subscriber.mutex_);
  require_quiescent_idle("attach_thread_subscriber");
  subscriber.require_quiescent_idle("becoming a thread subscriber");
  if (thread_subscriber_ != nullptr) {
    throw Error::format("team '{}' already has thread subscriber '{}': a team has at most one; detach it first", name_,
                        thread_subscriber_->name_);
  }
  for (const ThreadTeam::Impl* t = &subscriber; t != nullptr; t = t->thread_subscriber_) {
    if (t == this) {
      throw Error::format(
          "team '{}' cannot publish threads to '{}': '{}' already passes its threads on to '{}', "
          "and threads would circle forever",
          name_, subscriber.name_, subscriber.name_, name_);
    }
  }
  thread_subscriber_ = &subscriber;
  subscriber.thread_publishers_.push_back(this);
}

void ThreadTeam::Impl::detach_thread_subscriber() {
  std::lock_guard<std::mutex> topology(topology_mutex());
  ThreadTeam::Impl* const subscriber = thread_subscriber_;
  if (subscriber == nullptr) return;
  std::scoped_lock both(mutex_, subscriber->mutex_);
  require_quiescent_idle("detach_thread_subscriber");
  subscriber->require_quiescent_idle("losing a thread publisher");
  auto& pubs = subscriber->thread_publishers_;
  pubs.erase(std::remove(pubs.begin(), pubs.end(), this), pubs.end());
  thread_subscriber_ = nullptr;
}

void ThreadTeam::Impl::add_external_work_publisher() {
  std::lock_guard<std::mutex> lk(mutex_);
  require_quiescent_idle("add_external_work_publisher");
  ++external_publishers_;
}

void ThreadTeam::Impl::remove_external_work_publisher() {
  std::lock_guard<std::mutex> lk(mutex_);
  require_quiescent_idle("remove_external_work_publisher");
  if (external_publishers_ == 0) {
    throw Error::format("team '{}' has no external work publisher to remove", name_);
  }
  --external_publishers_;
}

// ---------------------------------------------------------------------------------------------
// Observation

TeamMode ThreadTeam::Impl::mode() const {
  std::lock_guard<std::mutex> lk(mutex_);
  return mode_;
}

TeamSnapshot ThreadTeam::Impl::snapshot() const {
  std::lock_guard<std::mutex> lk(mutex_);
  TeamSnapshot s;
  s.mode = mode_;
  s.n_max = n_max_;
  s.n_idle = n_idle_;
  s.n_waiting = n_waiting_;
  s.n_computing = n_computing_;
  s.n_to_activate = n_to_activate_;
  s.n_queued = queue_->size();
  s.finishing = finishing_;
  s.waiter_blocked = waiter_ != nullptr;
  s.closes_pending = mode_ == TeamMode::RunningOpen ? publisher_closes_pending_ + external_closes_pending_ : 0;
  s.work_publishers = static_cast<unsigned>(work_publishers_.size());
  s.external_work_publishers = external_publishers_;
  s.thread_publishers = static_cast<unsigned>(thread_publishers_.size());
  s.has_work_subscriber = work_subscriber_ != nullptr;
  s.has_thread_subscriber = thread_subscriber_ != nullptr;
  s.cycle = mode_ == TeamMode::Idle && !finishing_ ? last_report_ : report_;
  return s;
}

CycleReport ThreadTeam::Impl::last_cycle() const {
  std::lock_guard<std::mutex> lk(mutex_);
  return last_report_;
}

void ThreadTeam::Impl::rename(std::string name) {
  std::lock_guard<std::mutex> lk(mutex_);
  require_quiescent_idle("rename");
  name_ = excerpt(name);
}

void ThreadTeam::Impl::set_transition_observer(TransitionObserver observer) {
  std::lock_guard<std::mutex> lk(mutex_);
  require_quiescent_idle("set_transition_observer");
  observer_ = std::move(observer);
}

}  // namespace korch
