// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Signals of dataflow pipelines: a signal travels on an edge beside the data
// and is synchronized with it by credit: Signal::credit is the number of data items queued on that
// edge between the previous signal (or the queue's head) and this one.
#pragma once

#include <Kokkos_Core.hpp>

namespace korch::dataflow {

// A node produces at most this many signals from processing one run's worth of data items ...
inline constexpr int MAX_SIGNALS_PER_VEC = 2;
// ... and at most this many from processing one signal.
inline constexpr int MAX_SIGNALS_PER_SIG = 1;
// A signal queue is FULL when fewer than this many slots are free.
inline constexpr int SIGNAL_FULL_MARGIN = MAX_SIGNALS_PER_VEC + MAX_SIGNALS_PER_SIG;

// The finite set of signal tags. A node's signal handler dispatches on the tag to a handler
// function that a node type can override (dataflow::Node<Derived>::on_boundary, on_user).
enum class Tag : int {
  Boundary = 1,  // an enumerate node starts a new parent: `region`, `slot` name it
  User = 2       // reserved for node types that define their own signals; `slot` is a payload
};

struct Signal {
  Tag tag = Tag::Boundary;
  int region = 0;  // region number of the enumerate node that issued a Boundary signal
  int slot = -1;   // parent buffer slot of the new parent (Boundary), payload (User)
  int credit = 0;  // data items to consume on this edge before this signal
};

}  // namespace korch::dataflow
