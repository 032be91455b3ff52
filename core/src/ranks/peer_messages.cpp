// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "peer_messages.hpp"
#include "mpi_handle.hpp"

#include <korch/config.hpp>
#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace korch::detail {

struct PeerMessages::Requests {
#if KORCH_HAVE_MPI
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<MPI_Request> recv, send;
  std::vector<int> recv_id;    // the caller's id of recv[i]
  std::vector<int> recv_rank;  // the rank recv[i] comes from
  std::vector<int> recv_n;     // the doubles recv[i] expects
#endif
};

namespace {

constexpr const char* kWaitVariable = "KORCH_MESSAGE_WAIT_SECONDS";

#if KORCH_HAVE_MPI
constexpr double kDefaultWaitSeconds = 600;

// How long a wait for messages may go without any arriving (docs/ranks.md, "When a rank does not
// come"); 0: without end.
double message_wait_limit() {
  const char* text = std::getenv(kWaitVariable);
  if (text == nullptr || *text == '\0') return kDefaultWaitSeconds;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds >= 0) || seconds > 1e9)
    throw Error::format("{}={}: give the seconds a wait for other ranks' messages may last, 0 for no limit",
                        kWaitVariable, text);
  return seconds;
}
#endif

}  // namespace

PeerMessages::PeerMessages(const Communicator& comm, std::string who)
    : comm_(comm), who_(std::move(who)), requests_(std::make_unique<Requests>()) {
#if KORCH_HAVE_MPI
  if (comm_.uses_mpi()) {
    check(MPI_Comm_dup(mpi_comm(comm_), &requests_->comm), "MPI_Comm_dup");
    // A message longer than its receive is an error to report (wait_some_receives), not an abort.
    check(MPI_Comm_set_errhandler(requests_->comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  }
#endif
}

PeerMessages::~PeerMessages() {
  abandon();
#if KORCH_HAVE_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (requests_->comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&requests_->comm);
#endif
}

void PeerMessages::check(int rc, const char* call) const {
#if KORCH_HAVE_MPI
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error::format("{} on rank {}: {} failed: {}", who_, comm_.rank(), call,
                      std::string(text, static_cast<std::size_t>(length)));
#else
  (void)rc;
  (void)call;
#endif
}

void PeerMessages::receive(int rank, double* data, std::size_t n, int id) {
#if KORCH_HAVE_MPI
  auto& r = *requests_;
  if (r.comm == MPI_COMM_NULL)
    throw Error::format("{}: a message from rank {} on a communicator without MPI", who_, rank);
  if (outstanding_ == 0) {  // the last exchange's receives are all done
    r.recv.clear();
    r.recv_id.clear();
    r.recv_rank.clear();
    r.recv_n.clear();
  }
  r.recv.emplace_back();
  r.recv_id.push_back(id);
  r.recv_rank.push_back(rank);
  r.recv_n.push_back(static_cast<int>(n));
  ++outstanding_;
  check(MPI_Irecv(data, static_cast<int>(n), MPI_DOUBLE, rank, 0, r.comm, &r.recv.back()), "MPI_Irecv");
#else
  (void)data;
  (void)n;
  (void)id;
  throw Error::format("{}: a message from rank {}, but this build of korch has no MPI", who_, rank);
#endif
}

void PeerMessages::send(int rank, const double* data, std::size_t n) {
#if KORCH_HAVE_MPI
  auto& r = *requests_;
  if (r.comm == MPI_COMM_NULL)
    throw Error::format("{}: a message to rank {} on a communicator without MPI", who_, rank);
  r.send.emplace_back();
  check(MPI_Isend(data, static_cast<int>(n), MPI_DOUBLE, rank, 0, r.comm, &r.send.back()), "MPI_Isend");
#else
  (void)data;
  (void)n;
  throw Error::format("{}: a message to rank {}, but this build of korch has no MPI", who_, rank);
#endif
}

std::vector<int> PeerMessages::wait_some_receives() {
  std::vector<int> arrived;
#if KORCH_HAVE_MPI
  auto& r = *requests_;
  if (outstanding_ == 0) return arrived;
  std::vector<int> done(r.recv.size());
  std::vector<MPI_Status> statuses(r.recv.size());
  int n_done = 0, rc = MPI_SUCCESS;
  auto pause = std::chrono::microseconds(5);
  const double limit = message_wait_limit();
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    rc = MPI_Testsome(static_cast<int>(r.recv.size()), r.recv.data(), &n_done, done.data(), statuses.data());
    if (rc != MPI_ERR_IN_STATUS) check(rc, "MPI_Testsome");
    if (n_done != 0) break;
    if (limit > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit)
      throw_stalled(limit);
    std::this_thread::sleep_for(pause);
    pause = std::min(2 * pause, std::chrono::microseconds(200));
  }
  // Completed requests are MPI_REQUEST_NULL now: Testsome skips them, and gives MPI_UNDEFINED once
  // all are done.
  if (n_done == MPI_UNDEFINED) {
    outstanding_ = 0;
    return arrived;
  }
  outstanding_ -= n_done;
  for (int i = 0; i < n_done; ++i) {
    const auto k = static_cast<std::size_t>(done[static_cast<std::size_t>(i)]);
    const MPI_Status& status = statuses[static_cast<std::size_t>(i)];
    // The statuses' error fields are set only when some receive failed.
    const int error = rc == MPI_ERR_IN_STATUS ? status.MPI_ERROR : MPI_SUCCESS;
    int count = r.recv_n[k] + 1;  // longer than its receive: by how much MPI does not say
    if (error == MPI_SUCCESS) check(MPI_Get_count(&status, MPI_DOUBLE, &count), "MPI_Get_count");
    if (error != MPI_ERR_TRUNCATE) check(error, "a receive");
    // A shorter message leaves part of the buffer as the last exchange left it: never read that.
    if (count != r.recv_n[k])
      throw Error::format(
          "{} on rank {}: the message from rank {} carried {} doubles where {} were expected: every rank takes "
          "part in each exchange alike (the same leaves, the same variables)",
          who_, comm_.rank(), r.recv_rank[k],
          count > r.recv_n[k] ? fmt::format("more than {}", r.recv_n[k]) : std::to_string(count), r.recv_n[k]);
    arrived.push_back(r.recv_id[k]);
  }
#endif
  return arrived;
}

void PeerMessages::throw_stalled(double limit) const {
  std::vector<int> waiting;
#if KORCH_HAVE_MPI
  const auto& r = *requests_;
  for (std::size_t i = 0; i < r.recv.size(); ++i)
    if (r.recv[i] != MPI_REQUEST_NULL) waiting.push_back(r.recv_rank[i]);
#endif
  std::sort(waiting.begin(), waiting.end());
  waiting.erase(std::unique(waiting.begin(), waiting.end()), waiting.end());
  std::string ranks;
  for (const int w : waiting) ranks += (ranks.empty() ? "" : ", ") + std::to_string(w);
  throw Error::format(
      "{} on rank {}: no message came in {} s; still waiting for rank(s) {}: such a rank failed, or has not "
      "come to this exchange (every rank takes part in each: the same cycles, the same collective calls); if it "
      "is only slow, give it longer with {} (seconds, 0 for no limit)",
      who_, comm_.rank(), limit, ranks, kWaitVariable);
}

void PeerMessages::wait_sends() {
#if KORCH_HAVE_MPI
  auto& r = *requests_;
  if (!r.send.empty())
    check(MPI_Waitall(static_cast<int>(r.send.size()), r.send.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  r.send.clear();
#endif
}

void PeerMessages::abandon() noexcept {
#if KORCH_HAVE_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  auto& r = *requests_;
  if (!finalized) {
    // Every peer posts its sends when it starts the exchange: wait for them a while, then cancel.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    int all_arrived = r.recv.empty() ? 1 : 0;
    while (!all_arrived && std::chrono::steady_clock::now() < deadline) {
      MPI_Testall(static_cast<int>(r.recv.size()), r.recv.data(), &all_arrived, MPI_STATUSES_IGNORE);
      if (!all_arrived) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    for (auto& q : r.recv)
      if (q != MPI_REQUEST_NULL) {
        MPI_Cancel(&q);
        MPI_Request_free(&q);
      }
    for (auto& q : r.send)
      if (q != MPI_REQUEST_NULL) MPI_Request_free(&q);
  }
  r.recv.clear();
  r.recv_id.clear();
  r.recv_rank.clear();
  r.send.clear();
#endif
  outstanding_ = 0;
}

}  // namespace korch::detail
