// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/streams/cardinality.hpp>
#include <korch/streams/sequential.hpp>

namespace korch::streams {

namespace {
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }
}  // namespace

std::uint64_t takes(const Cards& cards, std::uint64_t k) {
  // foldr: the cardinality next to the computer (the last one) applies first.
  for (auto it = cards.rbegin(); it != cards.rend(); ++it) {
    if (it->in == 0 || it->out == 0) {
      throw Error::format("takes: cardinality {}/{} has a zero side; declare n/m with n, m >= 1", it->in, it->out);
    }
    k = ceil_div(k, it->out) * it->in;
  }
  return k;
}

std::uint64_t takes_with_history(const Cards& cards, std::uint64_t previous, std::uint64_t k) {
  return takes(cards, previous + k) - takes(cards, previous);
}

std::uint64_t min_qsize(const Cards& cards) { return takes(cards, 1); }

RunResult run_sequential(const Comp& program, const std::vector<Item>& input, const Env& env) {
  RunResult r;
  auto p = instantiate(program, env);
  std::size_t pos = 0;
  Signal s;
  p->tick(s);
  for (;;) {
    switch (s.kind) {
      case Signal::Yield:
        r.output.push_back(s.item);
        p->tick(s);
        break;
      case Signal::Skip: p->tick(s); break;
      case Signal::Consume:
        if (pos == input.size()) {
          r.starved = true;
          r.consumed = pos;
          return r;
        }
        p->process(input[pos++], s);
        break;
      case Signal::Done:
        r.value = s.value();
        r.consumed = pos;
        return r;
    }
  }
}

}  // namespace korch::streams
