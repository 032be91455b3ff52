// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Signals of dataflow pipelines: a signal travels on an edge beside the data
// and is synchronized with it by credit: Signal::credit is the number of data items queued on that
// edge between the previous signal (or the queue's head) and this one.
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace korch::dataflow {

// A node produces at most this many signals from processing one run's worth of data items ...
inline constexpr int MAX_SIGNALS_PER_VEC = 2;
// ... and at most this many from processing one signal.
inline constexpr int MAX_SIGNALS_PER_SIG = 1;
// A signal queue is FULL when fewer than this many slots are free (edges from a node that raises
// user signals add the most one of its runs can raise, see QueueDesc::sig_margin).
inline constexpr int SIGNAL_FULL_MARGIN = MAX_SIGNALS_PER_VEC + MAX_SIGNALS_PER_SIG;
// The largest payload of a user signal.
inline constexpr int USER_PAYLOAD_BYTES = 32;

// The finite set of signal tags. A node's signal handler dispatches on the tag to a handler
// function that a node type can override (dataflow::Node<Derived>::on_boundary, on_user).
enum class Tag : int {
  Boundary = 1,  // an enumerate node starts a new parent: `region`, `slot` name it
  User = 2       // a signal a node raised itself: `user` holds its kind and payload
};

// A signal of a node's own: a kind chosen by the application and a trivially copyable payload of
// at most USER_PAYLOAD_BYTES bytes, copied by value.
//
//   struct Mark { int count; float sum; };
//   emit.raise(UserSignal::make(7, Mark{n, s}));   ...   Mark m = s.payload<Mark>();
struct UserSignal {
  int kind = 0;
  alignas(8) unsigned char bytes[USER_PAYLOAD_BYTES] = {};

  template <class P>
  KOKKOS_INLINE_FUNCTION static UserSignal make(int kind, const P& payload) {
    static_assert(std::is_trivially_copyable_v<P>, "a user signal's payload must be trivially copyable");
    static_assert(sizeof(P) <= USER_PAYLOAD_BYTES, "a user signal's payload holds at most USER_PAYLOAD_BYTES bytes");
    UserSignal s;
    s.kind = kind;
    const unsigned char* src = reinterpret_cast<const unsigned char*>(&payload);
    for (unsigned k = 0; k < sizeof(P); ++k) s.bytes[k] = src[k];
    return s;
  }
  // The payload as P (the type it was made from; P default constructible).
  template <class P>
  KOKKOS_INLINE_FUNCTION P payload() const {
    static_assert(std::is_trivially_copyable_v<P>, "a user signal's payload must be trivially copyable");
    static_assert(sizeof(P) <= USER_PAYLOAD_BYTES, "a user signal's payload holds at most USER_PAYLOAD_BYTES bytes");
    P p{};
    unsigned char* dst = reinterpret_cast<unsigned char*>(&p);
    for (unsigned k = 0; k < sizeof(P); ++k) dst[k] = bytes[k];
    return p;
  }
};

// 56 bytes: 16 of tag, region, slot and credit, 40 of user signal.
struct Signal {
  Tag tag = Tag::Boundary;
  int region = 0;   // region number of the enumerate node that issued a Boundary signal
  int slot = -1;    // parent buffer slot of the new parent (Boundary)
  int credit = 0;   // data items to consume on this edge before this signal
  UserSignal user;  // kind and payload (User)

  KOKKOS_INLINE_FUNCTION static Signal boundary(int region, int slot) {
    Signal s;
    s.region = region;
    s.slot = slot;
    return s;
  }
  KOKKOS_INLINE_FUNCTION static Signal of_user(const UserSignal& u) {
    Signal s;
    s.tag = Tag::User;
    s.user = u;
    return s;
  }
};
static_assert(std::is_trivially_copyable_v<Signal>, "signals are copied into queues");
static_assert(sizeof(Signal) == 56, "docs/dataflow.md gives the size of a signal");

// A user signal that reached a sink: the instance (league rank) and the number of items that sink
// had received from that instance before it (Pipeline::signals).
struct SignalRecord {
  int instance = 0;
  long long position = 0;
  UserSignal signal;
};

// What a raising node's lane records per raised signal (staged, placed by the boss after the run):
// the signal and, per output channel, how many items the lane had emitted on it before.
template <int Channels>
struct RaisedSignal {
  UserSignal sig;
  int pos[Channels];
};

}  // namespace korch::dataflow
