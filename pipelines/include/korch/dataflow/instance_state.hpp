// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Where one pipeline instance keeps its state. Every league member of the pipeline kernel runs one
// instance; its ints (scheduler, node and queue fields), bytes (queues, parent buffers,
// accumulators) and statistics are its own rows of Views indexed by league rank, laid out once on
// the host (Pipeline) and identically for every instance.
#pragma once

#include <climits>

namespace korch::dataflow::detail {

// Flushing status of a node that is not flushing.
inline constexpr int NOT_FLUSHING = INT_MAX;

// Instance-global ints.
enum GlobalField : int {
  G_SP = 0,   // scheduler stack size
  G_CURRENT,  // node chosen by the boss
  G_PLAN0,    // run plan (double-buffered by run parity): items in the run, -1 = stop
  G_PLAN1,
  G_PREV_N,   // items of the run to commit
  G_SIGS_TO,  // signals to consume in this firing
  G_SC,       // signals consumed in this firing
  G_CREDIT,   // cached credit of the head signal
  G_ANYDS,    // some downstream node became active in this firing
  G_RUNS,     // runs in this firing
  G_STOP,     // instance stopped on an error
  G_FIELDS
};
// Per-node ints.
enum NodeField : int {
  N_ACTIVE = 0,
  N_BLOCKED,
  N_FLUSH,    // flushing status: lowest region whose flush is active; NOT_FLUSHING if none
  N_SCHED,    // on the scheduler stack
  N_HAS_CUR,  // enumerate: a parent is being enumerated; source: input exhausted
  N_SLOT,     // enumerate: its buffer slot
  N_NEXT,     // enumerate: next element; source: next input index
  N_CNT,      // enumerate: element count; source: end of the claimed chunk
  N_FIELDS
};
// Per-node statistics (64-bit).
enum StatField : int { ST_FIRINGS = 0, ST_RUNS, ST_LANES, ST_SIGNALS, ST_FLUSHES, ST_BLOCKS, ST_FIELDS };

// What the kernel knows of one node: its place in the graph and in the instance's layout.
// C: the most output channels of any node of the pipeline.
template <int C>
struct NodeDesc {
  int kind = 0;
  int parent = -1;
  int label = 0;    // region number
  int heads = -1;   // region number headed (enumerate)
  int closes = -1;  // region number closed (aggregate)
  int n_channels = 0;
  int child[C] = {};
  unsigned terminates = 0;
  int stage_off[C] = {};   // bytes (map: W*K items per channel)
  int counts_off[C] = {};  // ints (map: W+1 per channel)
  int arena_off = 0;       // bytes: enumerate parent buffer / aggregate accumulator
  int buffer_slots = 0;    // enumerate
  int refcount_off = 0;    // ints (enumerate: one per slot)
  int terminals = 0;       // enumerate: terminal nodes of its region
  int sink = -1;
  int raises = 0;      // map: most user signals raised per input
  int raise_off = 0;   // bytes (map: W*raises staged RaisedSignal records)
  int raised_off = 0;  // ints (map: signals raised per lane in the run, W)
};

}  // namespace korch::dataflow::detail

namespace korch::dataflow {

// Pointers to one instance's rows, built by each league member at the start of the kernel and
// passed to every node hook.
struct InstanceState {
  char* arena;       // this instance's bytes
  int* state;        // this instance's ints
  long long* stats;  // this instance's statistics
  long long* wide;   // this instance's 64-bit scratch (sink base)
  int rank;          // league rank
};

}  // namespace korch::dataflow
