// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API's handles (docs/c-api.md, "Handles"). A korch_blocks*, korch_bundle*, ... that a caller
// holds is never an address: it encodes a slot of one table, the slot's generation and the handle's
// kind. A destroyed handle, a handle of another kind or any other value is then an error status
// naming the handle and its kind, never a read of freed memory; destroying twice is such an error.
//
// Every object sits behind a shared_ptr, so a call that found it keeps it alive to the end of the
// call even if another thread destroys the handle meanwhile. A call that runs a cycle leases its
// objects for the cycle (`Lease`); changing or destroying a leased object is an error naming the
// cycle, so an action routine cannot free or change what its own cycle reads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace korch::c_api {

enum class HandleKind : unsigned { blocks = 1, bundle, configuration, neighbours, exchange, ready, forest };
constexpr HandleKind last_handle_kind = HandleKind::forest;  // a handle naming a later kind is not korch's
// The C type a kind is: "korch_blocks", ...
const char* type_name(HandleKind kind) noexcept;

// What the table keeps of each object besides the object: its name for messages, and its leases
// (guarded by the table's mutex).
struct HandleObject {
  virtual ~HandleObject() = default;
  std::string label;     // e.g. "korch_blocks 'heat'" (an excerpt of the name)
  unsigned readers = 0;  // running cycles that read it
  bool writer = false;   // a call that changes it is running
};

// A live object of a handle, held for one call; `Exclusive` ones may be changed by the call.
class Lease {
 public:
  enum Mode { shared, exclusive };
  Lease(std::shared_ptr<HandleObject> object, Mode mode, const char* call);
  Lease(Lease&& other) noexcept = default;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  Lease& operator=(Lease&&) = delete;
  ~Lease();
  HandleObject& object() const noexcept { return *object_; }

 private:
  std::shared_ptr<HandleObject> object_;
  Mode mode_;
};

// Adds `object` to the table; returns its handle.
std::uintptr_t add_handle(HandleKind kind, std::shared_ptr<HandleObject> object);
// The object of a live handle of `kind`, or a korch::Error naming `parameter`, the handle and kinds.
std::shared_ptr<HandleObject> find_handle(std::uintptr_t handle, HandleKind kind, const char* parameter);
// Removes a live handle of `kind` that no call leases; a NULL handle is nothing to remove.
void remove_handle(std::uintptr_t handle, HandleKind kind, const char* parameter);

// Typed use of the table: T derives from HandleObject and names its kind as T::kind.
template <class T, class Handle>
Handle* make_handle(std::shared_ptr<T> object) {
  return reinterpret_cast<Handle*>(add_handle(T::kind, std::move(object)));
}
template <class T>
T& object_of(const Lease& lease) {
  return static_cast<T&>(lease.object());
}
template <class T, class Handle>
Lease lease(const Handle* handle, const char* parameter, Lease::Mode mode, const char* call) {
  return Lease(find_handle(reinterpret_cast<std::uintptr_t>(handle), T::kind, parameter), mode, call);
}

}  // namespace korch::c_api
