// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What an action routine knows about the call it is in: which team and thread run it, in which
// cycle, on which of the thread's own Kokkos execution-space instances, with which parameters.
// Built by the team thread once per cycle; routines get it by const reference. No globals.
#pragma once

#include <korch/action_parameters.hpp>
#include <korch/error.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/data_item.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace korch {

class ActionContext {
 public:
  using Outputs = std::vector<std::shared_ptr<DataItem>>;

  // `outputs` collects what an emitting routine emits (nullptr for a routine whose output is its item).
  ActionContext(unsigned team_id, const std::string& team_name, unsigned thread_index, std::uint64_t cycle,
                const ThreadSpaces& spaces, const ActionParameters& parameters, Outputs* outputs = nullptr)
      : team_id_(team_id),
        team_name_(&team_name),
        thread_index_(thread_index),
        cycle_(cycle),
        spaces_(&spaces),
        parameters_(&parameters),
        outputs_(outputs) {}

  unsigned team_id() const noexcept { return team_id_; }
  const std::string& team_name() const noexcept { return *team_name_; }
  // 0 .. N_max-1 within the team; fixed for the thread's life.
  unsigned thread_index() const noexcept { return thread_index_; }
  // 1 for the team's first cycle.
  std::uint64_t cycle() const noexcept { return cycle_; }

  // The thread's own instances (see korch/backend/thread_spaces.hpp for what is safe on each).
  const HostTaskSpace& host_space() const noexcept { return spaces_->host(); }
  const DeviceTaskSpace& device_space() const noexcept { return spaces_->device(); }
  const ThreadSpaces& spaces() const noexcept { return *spaces_; }

  const ActionParameters& parameters() const noexcept { return *parameters_; }
  // The cycle's parameters as a T; throws korch::Error when start_cycle was given another type.
  template <class T>
  const T& parameters_as() const {
    return parameters_->get<T>();
  }

  // An output of an emitting routine (ActionRoutine::emitting): the team hands it to its work
  // subscriber after the call returns, in emission order.
  void emit(std::shared_ptr<DataItem> item) const {
    if (outputs_ == nullptr) {
      throw Error::format(
          "team '{}': a routine emitted an item, but its output is the item it was given: make it "
          "with ActionRoutine::emitting to hand on new items",
          *team_name_);
    }
    if (!item) throw Error::format("team '{}': a routine emitted a null item", *team_name_);
    outputs_->push_back(std::move(item));
  }

 private:
  unsigned team_id_;
  const std::string* team_name_;
  unsigned thread_index_;
  std::uint64_t cycle_;
  const ThreadSpaces* spaces_;
  const ActionParameters* parameters_;
  Outputs* outputs_;
};

}  // namespace korch
