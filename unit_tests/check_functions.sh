#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# scripts/check-functions on a source shaped like korch's: every function it must find, under the
# name it must give, with the length of its body (lines from '{' to '}'), and nothing else.
#
#   check_functions.sh PATH/TO/scripts/check-functions
set -euo pipefail

check=${1:?usage: check_functions.sh PATH/TO/scripts/check-functions}
dir=$(mktemp -d "${TMPDIR:-/tmp}/korch-check-functions.XXXXXX")
trap 'rm -rf "$dir"' EXIT

cat > "$dir/shapes.cpp" <<'CPP'
#include <functional>
namespace korch {
struct Options { int spin = 0; };
class Team {
 public:
  // A constructor is named after itself, not after its last member initializer.
  Team(int threads, const char* name) : threads_(threads), name_(name) {
    if (threads_ < 0) threads_ = 0;
  }
  // Members initialized with braces.
  explicit Team(int threads) : threads_{threads}, name_{"team"} {
    ++threads_;
  }
  // A lambda passed to a member initializer belongs to the constructor.
  Team(const Options& o, int n)
      : threads_(n), name_("lambda"), work_([o](int x) {
          return x + o.spin;
        }) {
    threads_ += work_(1);
  }
 private:
  int threads_;
  const char* name_;
  std::function<int(int)> work_;
};
// A defaulted argument with braces.
int spin_of(const Options& o = {}) {
  int s = o.spin;
  return s;
}
}  // namespace korch
CPP

expected="shapes.cpp:7: Team: 3 lines
shapes.cpp:11: Team: 3 lines
shapes.cpp:18: Team: 3 lines
shapes.cpp:27: spin_of: 4 lines"
actual=$(cd "$dir" && python3 "$check" --limit 2 shapes.cpp 2>/dev/null | sed 's|^.*/shapes.cpp|shapes.cpp|') || true
if [[ "$actual" != "$expected" ]]; then
  echo "FAIL: check-functions reported" >&2
  echo "$actual" >&2
  echo "expected" >&2
  echo "$expected" >&2
  exit 1
fi
echo "check-functions: every function found and named"
