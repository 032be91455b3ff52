// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A setup-time condition of an operation (docs/planner.md, "Conditions"): "p", "!p" or
// "p OP number" with OP one of == != < <= > >=, over the operation's numeric parameters. A barrier
// whose "unless" condition holds is removed from the kernel graph.
#pragma once

#include <map>
#include <string>

namespace korch::plan {

class Condition {
 public:
  Condition() = default;  // empty: never holds
  // Throws korch::Error naming `field` when the text is not of the forms above.
  static Condition parse(const std::string& text, const std::string& field);

  bool empty() const noexcept { return parameter_.empty(); }
  const std::string& text() const noexcept { return text_; }
  const std::string& parameter() const noexcept { return parameter_; }
  // Throws korch::Error naming the parameter when it is not in `parameters`.
  bool holds(const std::map<std::string, double>& parameters) const;

 private:
  std::string text_;
  std::string parameter_;
  std::string op_;  // "" (nonzero), "!" (zero) or a comparison
  double value_ = 0.0;
};

}  // namespace korch::plan
