// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Auxiliary cycles: a routine run once, with no items, on one pipeline team's thread and its
// execution-space instances, between execution cycles (Runtime::run_auxiliary). For work a cycle's
// routines then rely on, e.g. putting the grid's geometry or a table of constants into device
// memory once per regrid. It is a cycle like any other in what matters to its caller: it takes its
// turn with execute(), a routine that throws reaches the caller as a korch::Error naming the
// routine and the team, and an attached trace shows it as a task. Design: docs/typed-actions.md.
#pragma once

#include <korch/action_context.hpp>
#include <korch/data_item.hpp>

#include <functional>
#include <string>
#include <utility>

namespace korch {

// Which of the thread's instances the routine's work goes to; korch fences it after the routine
// returns, so what the routine launched there is complete when run_auxiliary returns.
enum class AuxiliarySpace { host, device };

struct AuxiliaryPlacement {
  unsigned team = 0;  // index of the pipeline team (Runtime::team)
  AuxiliarySpace space = AuxiliarySpace::device;
};

class AuxiliaryRoutine {
 public:
  using Function = std::function<void(const ActionContext&)>;
  AuxiliaryRoutine(std::string name, Function function) : name_(std::move(name)), function_(std::move(function)) {}
  const std::string& name() const noexcept { return name_; }
  explicit operator bool() const noexcept { return static_cast<bool>(function_); }
  void operator()(const ActionContext& context) const { function_(context); }

 private:
  std::string name_;
  Function function_;
};

// The one item of an auxiliary cycle: it stands for the call, so that the team's errors and the
// trace say which routine ran.
class AuxiliaryCall : public DataItem {
 public:
  explicit AuxiliaryCall(std::string routine) : routine_(std::move(routine)) {}
  std::string describe() const override { return "auxiliary call of '" + routine_ + "'"; }

 private:
  std::string routine_;
};

}  // namespace korch
