// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What every run loop (uniform and adaptive) does after a step about checkpoints and stop signals
// (docs/outputs.md, "Checkpoints").
#pragma once

#include "options.hpp"

#include <korch/communicator.hpp>

#include <functional>
#include <string>

namespace korch::hydro {

// After step `steps` (time `time`) of a run: the checkpoint every --checkpoint-every steps, and once
// a stop signal reached any rank (all stop at the same step: a signal may reach the ranks at
// different moments) the checkpoint, `stopping`, then Interrupted naming how to continue. `write`
// writes a checkpoint to `path`.
void checkpoint_after_step(const Options& options, const Communicator& comm, int steps, double time,
                           const std::string& path, const std::function<void(const std::string&)>& write,
                           const std::function<void()>& stopping);

}  // namespace korch::hydro
