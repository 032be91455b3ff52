// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "checkpoint_after_step.hpp"

#include "checkpoint.hpp"

#include <fmt/format.h>

namespace korch::hydro {

void checkpoint_after_step(const Options& o, const Communicator& comm, int steps, double time, const std::string& path,
                           const std::function<void(const std::string&)>& write,
                           const std::function<void()>& stopping) {
  if (o.checkpoint_every > 0 && steps % o.checkpoint_every == 0) write(path);
  const int signal = comm.size() > 1 ? static_cast<int>(comm.max(stop_signal())) : stop_signal();
  if (signal == 0) return;
  write(path);
  stopping();
  throw Interrupted(signal, fmt::format("stopped by signal {} after step {} (t = {}); checkpoint written to {}: "
                                        "continue with --restart {}",
                                        signal, steps, time, path, path));
}

}  // namespace korch::hydro
