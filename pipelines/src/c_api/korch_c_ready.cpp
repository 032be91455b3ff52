// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API's readiness of blocks whose guard cells the code fills itself (korch/korch_c.h,
// docs/c-api.md "The code's own guard-cell fill"): korch::ReadyBlocks behind a handle, its poll
// routine a C or Fortran function.
#include "c_item.hpp"
#include "c_library.hpp"

#include <korch/ready_blocks.hpp>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>

namespace korch::c_api {

// Keeps its blocks alive (destroying their handle first leaves them to this object).
struct ReadyObject : HandleObject {
  static constexpr HandleKind kind = HandleKind::ready;
  std::shared_ptr<BlocksObject> blocks;
  std::unique_ptr<ReadyBlocks> ready;
  korch_ready* handle = nullptr;  // what the poll routine is given
};

}  // namespace korch::c_api

namespace {

using korch::c_api::BlocksObject;
using korch::c_api::BundleObject;
using korch::c_api::ConfigurationObject;
using korch::c_api::guarded;
using korch::c_api::Lease;
using korch::c_api::object_of;
using korch::c_api::ReadyObject;
using korch::c_api::require;

korch::ReadyBlocksOptions options_for(double stall_seconds) {
  if (!(stall_seconds >= 0) || !std::isfinite(stall_seconds) || stall_seconds > 1e9)
    throw korch::Error::format("stall_seconds is {}: give 0 (120 s) or a positive number of seconds", stall_seconds);
  korch::ReadyBlocksOptions o;
  if (stall_seconds > 0)
    o.stall_limit = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(stall_seconds * 1e3)));
  return o;
}

// The C++ poll routine that calls the code's: a non-zero status fails the cycle, naming it.
korch::ReadyBlocks::Poll c_poll(ReadyObject& r, korch_poll_fn poll, void* user) {
  if (poll == nullptr) return {};
  return [&r, poll, user](korch::ReadyBlocks&) {
    std::string message;
    const int status = korch::c_api::call_user_routine(
        "poll", [&] { return poll(r.handle, user); }, message);
    if (status != 0)
      throw korch::Error::format("the poll routine of {} returned status {}{}{}", r.label, status,
                                 message.empty() ? "" : ": ", message);
  };
}

}  // namespace

extern "C" {

int korch_ready_create(korch_blocks* blocks, korch_poll_fn poll, void* user, double stall_seconds, korch_ready** out) {
  return guarded("korch_ready_create", [&] {
    require(out, "out", "pass the address of a korch_ready pointer");
    *out = nullptr;
    const auto b = std::static_pointer_cast<BlocksObject>(
        korch::c_api::find_handle(reinterpret_cast<std::uintptr_t>(blocks), BlocksObject::kind, "blocks"));
    auto r = std::make_shared<ReadyObject>();
    r->label = "korch_ready of " + b->label;
    r->blocks = b;
    r->ready = std::make_unique<korch::ReadyBlocks>(c_poll(*r, poll, user), options_for(stall_seconds));
    ReadyObject& object = *r;
    object.handle = korch::c_api::make_handle<ReadyObject, korch_ready>(std::move(r));
    *out = object.handle;
  });
}

int korch_ready_mark(korch_ready* ready, int32_t block) {
  return guarded("korch_ready_mark", [&] {
    const Lease r = korch::c_api::lease<ReadyObject>(ready, "ready", Lease::shared, "use");
    object_of<ReadyObject>(r).ready->mark_ready(block);
  });
}

int korch_ready_clear(korch_ready* ready) {
  return guarded("korch_ready_clear", [&] {
    const Lease r = korch::c_api::lease<ReadyObject>(ready, "ready", Lease::shared, "use");
    object_of<ReadyObject>(r).ready->clear_marks();
  });
}

int korch_execute_ready(const korch_bundle* bundle, const korch_configuration* configuration, korch_ready* ready) {
  return guarded("korch_execute_ready", [&] {
    const Lease b = korch::c_api::lease<BundleObject>(bundle, "bundle", Lease::shared, "use");
    const Lease c = korch::c_api::lease<ConfigurationObject>(configuration, "configuration", Lease::shared, "use");
    const Lease r = korch::c_api::lease<ReadyObject>(ready, "ready", Lease::shared, "use");
    ReadyObject& object = object_of<ReadyObject>(r);
    const Lease list(object.blocks, Lease::shared, "use");
    const korch::c_api::RuntimeUse use;
    korch::c_api::check_c_routines(object_of<ConfigurationObject>(c).configuration, object_of<BundleObject>(b).bundle);
    use.runtime().execute(object_of<BundleObject>(b).bundle, object_of<ConfigurationObject>(c).configuration,
                          object.blocks->list, object.ready.get());
  });
}

int korch_ready_destroy(korch_ready* ready) {
  return guarded("korch_ready_destroy", [&] {
    korch::c_api::remove_handle(reinterpret_cast<std::uintptr_t>(ready), ReadyObject::kind, "ready");
  });
}

}  // extern "C"
