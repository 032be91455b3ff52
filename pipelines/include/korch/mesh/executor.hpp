// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::Executor: runs par_loops. Three implementations:
//   SequentialExecutor  elements in order on the host, INC straight into its target: the reference
//   DirectExecutor      Kokkos parallel_for on the backend's DeviceExecSpace (colouring or atomics)
//   MessageExecutor     every element a device, the loop a round of messages
#pragma once

#include <korch/mesh/par_loop.hpp>

#include <string>

namespace korch::mesh {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string name() const = 0;
  // Runs the loop once; returns when every element is done and globals hold their new values.
  virtual void run(ParLoopBase& loop) = 0;
};

class SequentialExecutor final : public Executor {
 public:
  std::string name() const override { return "sequential"; }
  void run(ParLoopBase& loop) override {
    detail::refuse_stale_halos(name(), loop.name(), loop.args());
    loop.run_sequential();
  }
};

}  // namespace korch::mesh
