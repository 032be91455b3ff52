// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The message-driven executor (see message_executor.hpp): its options, and the cache of compiled
// invocations, one per loop, named after the loop (uniquified when names repeat). Compiling:
// message_compile.cpp; running: message_run.cpp; dumping: message_dump.cpp.
#include <korch/mesh/message_executor.hpp>

#include "message_program.hpp"

#include <korch/error.hpp>
#include <korch/thread_team.hpp>

#include <fmt/format.h>

#include <string>
#include <utility>

namespace korch::mesh {

MessageExecutor::MessageExecutor(MessageOptions options) : options_(options) {
  if (options_.threads < 1) throw Error("MessageExecutor: threads must be at least 1");
}

MessageExecutor::MessageExecutor(const Partition& partition, MessageOptions options) : MessageExecutor(options) {
  sync_ = std::make_unique<RankSync>(partition);
}

MessageExecutor::~MessageExecutor() = default;

std::string MessageExecutor::name() const {
  const char* ranks = sync_ && sync_->partition().size() > 1 ? ", on ranks" : "";
  if (options_.random_seed)
    return fmt::format("message-driven ({} threads, random order, seed {}{})", options_.threads, *options_.random_seed,
                       ranks);
  return fmt::format("message-driven ({} threads, batches of {}{})", options_.threads, options_.batch, ranks);
}

MessageExecutor::Program& MessageExecutor::program(const ParLoopBase& loop) {
  auto& slot = programs_[loop.uid()];
  if (!slot) {
    int& uses = names_[loop.name()];
    ++uses;
    std::string inv = uses == 1 ? loop.name() : fmt::format("{}_{}", loop.name(), uses);
    if (sync_ && sync_->partition().size() > 1)  // a loop's share is fixed with the partition
      slot = detail::compile(loop, std::move(inv), &sync_->elements(loop), &sync_->partition().of(loop.set()).is_owned);
    else
      slot = detail::compile(loop, std::move(inv));
  }
  return *slot;
}

std::string MessageExecutor::invocation_name(const ParLoopBase& loop) { return program(loop).inv; }

}  // namespace korch::mesh
