// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/guard_cell_iterator.hpp>

namespace korch {

GuardCellIterator::GuardCellIterator(GuardCellExchange& exchange, int first, int count)
    : exchange_(exchange), first_(first), count_(count) {}

void GuardCellIterator::set_variables(int first, int count) {
  if (exchange_.in_progress())
    throw Error("guard-cell iterator: set_variables() during a cycle: change the variables between cycles");
  first_ = first;
  count_ = count;
}

void GuardCellIterator::begin(const DataSource& source) {
  if (&source != &exchange_.source())
    throw Error::format(
        "guard-cell iterator: the cycle runs on {}, but the exchange fills {}: pass the exchange's own "
        "source to Runtime::execute",
        source.source_name(), exchange_.source().source_name());
  exchange_.start(first_, count_);
  const auto& local = exchange_.blocks_without_messages();
  ready_.assign(local.begin(), local.end());
  early_ = 0;
}

std::optional<int> GuardCellIterator::next() {
  while (ready_.empty() && exchange_.messages_outstanding() > 0) {
    for (const int b : exchange_.wait_some()) ready_.push_back(b);
  }
  if (ready_.empty()) {
    exchange_.finish();
    return std::nullopt;
  }
  const int b = ready_.front();
  ready_.pop_front();
  // The blocks reading this one's interior take their copies first: the cycle may write it now.
  exchange_.fill_readers_of(b);
  exchange_.fill_local(b);
  if (exchange_.messages_outstanding() > 0) ++early_;
  return b;
}

void GuardCellIterator::abandon() noexcept {
  ready_.clear();
  exchange_.abandon();
}

}  // namespace korch
