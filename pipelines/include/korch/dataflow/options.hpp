// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How a dataflow pipeline is shaped (make_pipeline in pipeline.hpp): kept apart so that a program's
// command line can hold these options without Kokkos.
#pragma once

namespace korch::dataflow {

// Where each pipeline instance keeps its queues, buffers and scheduling state (docs/dataflow.md,
// "Instance memory").
enum class InstanceMemory {
  automatic,     // team scratch on GPUs when one instance fits there; global memory otherwise and on hosts
  team_scratch,  // team scratch memory (level 0); an error when one instance does not fit
  global         // rows of Views in the space's memory
};

struct Options {
  int vector_width = 0;      // items per run; 0: 64 on hosts, 128 on GPUs (= team size there)
  int instances = 0;         // pipeline instances (league size); 0: one per host thread / 4 per SM-ish
  double queue_scale = 4.0;  // data capacity = scale x (max output of one upstream run)
                             //                 + (consumer's run width - 1); minimum 1
  int chunk = 0;             // input items an instance claims at a time; 0: 8 x vector_width
  int team_size = 0;         // 0: 1 on host spaces, vector_width on GPUs
  int signal_log = 0;        // user signals each sink records (Pipeline::signals); 0: count only
  InstanceMemory instance_memory = InstanceMemory::automatic;
  bool cap_registers = false;  // GPU spaces: at most 64 registers per lane (Kokkos::LaunchBounds<1024, 1>),
                               // more instances resident, some of a lane's state spilled; hosts: no effect
};

}  // namespace korch::dataflow
