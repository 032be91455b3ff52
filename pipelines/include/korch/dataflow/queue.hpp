// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DataQueue and SignalQueue: the two queues in front of every non-source node.
// Queues of all pipeline instances live in preallocated Views indexed by league rank; these
// accessors are thin views over one instance's part, built inside the kernel.
#pragma once

#include <korch/dataflow/signal.hpp>

#include <Kokkos_Core.hpp>

namespace korch::dataflow {

// Where one edge's queues live inside an instance (same for every instance).
struct QueueDesc {
  int data_off = 0;     // byte offset of the data ring in the instance's arena
  int cap = 0;          // data capacity (items)
  int sig_off = 0;      // byte offset of the signal ring
  int sig_cap = 0;      // signal capacity
  int state_off = 0;    // offset of the queue's counters in the instance's int state
  int full_margin = 0;  // data queue is FULL when fewer slots than this are free: the most one
                        // run of the producer can write
  int input_width = 1;  // most items the consumer processes in one run (EMPTY threshold)
  int overhang = 0;     // slots allocated past `cap` (one-lane teams: full_margin). A producer
                        // writes a run contiguously from the tail, possibly into the overhang,
                        // then moves what landed past `cap` to the start of the ring (see
                        // wrap_overhang), so its hot loop has no per-item wrap check.
  // The signal queue is FULL when fewer slots than this are free: the most signals one run of
  // the producer issues (more when it raises user signals).
  int sig_margin = SIGNAL_FULL_MARGIN;
};

// After a run wrote `total` items contiguously at data[pos..pos+total) (pos < cap, the run may
// extend into the overhang past cap), moves the part past the end to the start of the ring.
template <class T>
KOKKOS_INLINE_FUNCTION void wrap_overhang(T* data, int cap, int pos, int total) {
  const int end = pos + total;
  for (int k = cap; k < end; ++k) data[k - cap] = data[k];
}

// The counters of one edge (ints in the instance state).
enum QueueField : int {
  Q_HEAD = 0,       // ring index of the first queued item
  Q_COUNT,          // queued items
  Q_TAIL_CREDIT,    // items queued after the last queued signal: the next signal's credit
  Q_QUEUED_CREDIT,  // credit still owed by the queued signals (debug: never above Q_COUNT)
  S_HEAD,           // ring index of the first queued signal
  S_COUNT,          // queued signals
  Q_FIELDS
};

template <class T>
struct DataQueue {
  T* data;
  int cap;
  int* st;
  KOKKOS_INLINE_FUNCTION int count() const { return st[Q_COUNT]; }
  KOKKOS_INLINE_FUNCTION int free() const { return cap - st[Q_COUNT]; }
  // ring index of the i-th item after the head (0 <= i < 2*cap)
  KOKKOS_INLINE_FUNCTION int index(int i) const {
    int k = st[Q_HEAD] + i;
    while (k >= cap) k -= cap;
    return k;
  }
  KOKKOS_INLINE_FUNCTION T& at(int i) const { return data[index(i)]; }
  // the i-th free slot after the tail
  KOKKOS_INLINE_FUNCTION T& after_tail(int i) const { return data[index(st[Q_COUNT] + i)]; }
};

struct SignalQueue {
  Signal* sig;
  int cap;
  int* st;
  KOKKOS_INLINE_FUNCTION int count() const { return st[S_COUNT]; }
  KOKKOS_INLINE_FUNCTION int free() const { return cap - st[S_COUNT]; }
  KOKKOS_INLINE_FUNCTION Signal& head() const { return sig[st[S_HEAD]]; }
  KOKKOS_INLINE_FUNCTION Signal& at(int i) const {
    int k = st[S_HEAD] + i;
    while (k >= cap) k -= cap;
    return sig[k];
  }
};

}  // namespace korch::dataflow
