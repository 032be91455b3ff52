// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/plan/condition.hpp>

#include <cctype>
#include <cstdlib>

namespace korch::plan {

namespace {
std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}
bool is_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}
}  // namespace

Condition Condition::parse(const std::string& text, const std::string& field) {
  Condition c;
  c.text_ = trim(text);
  const Error bad =
      Error::format("field {}: condition '{}' is not 'p', '!p' or 'p OP number' (OP: == != < <= > >=)", field, text);
  std::string rest = c.text_;
  if (!rest.empty() && rest[0] == '!' && (rest.size() < 2 || rest[1] != '=')) {
    c.op_ = "!";
    rest = trim(rest.substr(1));
  } else {
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
      const std::size_t at = rest.find(op);
      if (at == std::string::npos) continue;
      c.op_ = op;
      const std::string number = trim(rest.substr(at + std::string(op).size()));
      char* end = nullptr;
      c.value_ = std::strtod(number.c_str(), &end);
      if (number.empty() || end == nullptr || *end != '\0') throw bad;
      rest = trim(rest.substr(0, at));
      break;
    }
  }
  if (!is_name(rest)) throw bad;
  c.parameter_ = rest;
  return c;
}

bool Condition::holds(const std::map<std::string, double>& parameters) const {
  if (empty()) return false;
  const auto it = parameters.find(parameter_);
  if (it == parameters.end()) {
    throw Error::format("condition '{}': parameter '{}' is not among the operation's parameters: add it there", text_,
                        parameter_);
  }
  const double p = it->second;
  if (op_.empty()) return p != 0.0;
  if (op_ == "!") return p == 0.0;
  if (op_ == "==") return p == value_;
  if (op_ == "!=") return p != value_;
  if (op_ == "<") return p < value_;
  if (op_ == "<=") return p <= value_;
  if (op_ == ">") return p > value_;
  return p >= value_;
}

}  // namespace korch::plan
