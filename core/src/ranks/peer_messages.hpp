// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal: the nonblocking messages of one exchange between this rank and some of the others, on
// a communicator of their own (a duplicate of the given one, so that they match only each other):
// receives posted and sends started, then the receives taken as they complete, the sends waited
// for, or everything dropped when the exchange fails part-way. Used by the guard-cell exchange
// (docs/ranks.md) and the adaptive mesh's copies of other ranks' leaves (docs/adaptive-mesh.md).
// Without MPI (or on a communicator without it) there are no messages: posting one throws.
#pragma once

#include <korch/communicator.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace korch::detail {

class PeerMessages {
 public:
  // `who` names the exchange in errors ("guard-cell exchange", say).
  PeerMessages(const Communicator& comm, std::string who);
  ~PeerMessages();
  PeerMessages(const PeerMessages&) = delete;
  PeerMessages& operator=(const PeerMessages&) = delete;

  // Posts a receive of n doubles from `rank` into `data`; wait_some_receives names it by `id`.
  void receive(int rank, double* data, std::size_t n, int id);
  // Starts sending n doubles at `data` to `rank` (the buffer must stay until wait_sends()).
  void send(int rank, const double* data, std::size_t n);
  int receives_outstanding() const noexcept { return outstanding_; }
  // Waits until at least one outstanding receive completed and returns the ids of those that did
  // (empty once none is outstanding). Polls with sleeps that grow from 5 to 200 µs rather than
  // blocking in MPI, whose waits spin in Open MPI: the waiting thread must leave its core to the
  // threads that compute meanwhile. Throws korch::Error naming the ranks it waits for when none
  // came within KORCH_MESSAGE_WAIT_SECONDS (600 s unless set; 0: no limit), so that a rank that
  // failed or skipped the exchange stops the others instead of leaving them waiting.
  std::vector<int> wait_some_receives();
  // Waits for every send; the exchange is over.
  void wait_sends();
  // Drops an exchange in progress (a failed cycle): waits up to 20 s for the receives (messages
  // the other ranks sent would otherwise be taken by the next exchange's), then cancels what has
  // not come and releases the requests. No throw.
  void abandon() noexcept;

 private:
  struct Requests;  // MPI requests and the communicator (MPI builds only)
  void check(int rc, const char* call) const;
  [[noreturn]] void throw_stalled(double limit) const;

  Communicator comm_;
  std::string who_;
  std::unique_ptr<Requests> requests_;
  int outstanding_ = 0;
};

}  // namespace korch::detail
