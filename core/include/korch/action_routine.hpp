// An action routine: the one code interface every routine run by a thread team has
//, plus a name so
// that errors and traces can say which routine was running.
#pragma once

#include <korch/action_context.hpp>
#include <korch/data_item.hpp>

#include <functional>
#include <string>
#include <utility>

namespace korch {

class ActionRoutine {
 public:
  using Function = std::function<void(const ActionContext&, DataItem&)>;

  ActionRoutine() = default;  // empty: start_cycle rejects it
  ActionRoutine(std::string name, Function function)
      : name_(std::move(name)), function_(std::move(function)) {}

  const std::string& name() const noexcept { return name_; }
  explicit operator bool() const noexcept { return static_cast<bool>(function_); }

  void operator()(const ActionContext& context, DataItem& item) const { function_(context, item); }

 private:
  std::string name_;
  Function function_;
};

}  // namespace korch
