// Internal to the C API (korch/korch_c.h): the handles behind its opaque types, the library's one
// runtime, and `guarded`, which turns any exception of an entry point into a status and the
// calling thread's last error message.
#pragma once

#include <korch/block_list.hpp>
#include <korch/bundle.hpp>
#include <korch/communicator.hpp>
#include <korch/configuration.hpp>
#include <korch/error.hpp>
#include <korch/korch_c.h>
#include <korch/runtime.hpp>

#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

struct korch_blocks {
  korch::BlockList list;
};
struct korch_bundle {
  korch::Bundle bundle;
};
struct korch_configuration {
  korch::Configuration configuration;
};

namespace korch::c_api {

struct Library {
  std::mutex mutex;  // initialize / finalize
  std::unique_ptr<Runtime> runtime;
  bool kokkos_ours = false;
  std::unique_ptr<MpiSession> mpi;        // korch_start_mpi
  std::optional<Communicator> communicator;  // korch_use_communicator
};
Library& library();
// The calling thread's last failure.
std::string& last_error();

template <class Body>
int guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    return KORCH_OK;
  } catch (const Error& e) {
    last_error() = std::string(function) + ": " + e.what();
    return KORCH_ERROR;
  } catch (const std::exception& e) {
    last_error() = std::string(function) + ": unexpected error: " + e.what();
    return KORCH_ERROR_INTERNAL;
  } catch (...) {
    last_error() = std::string(function) + ": unexpected error of unknown type";
    return KORCH_ERROR_INTERNAL;
  }
}

template <class T>
T& require(T* handle, const char* what, const char* how) {
  if (handle == nullptr) throw Error::format("{} is NULL: {}", what, how);
  return *handle;
}

inline std::string require_text(const char* text, const char* what) {
  if (text == nullptr) throw Error::format("{} is NULL: give a NUL-terminated string", what);
  return text;
}

inline Runtime& runtime() {
  auto& l = library();
  if (!l.runtime) throw Error("korch is not initialized: call korch_initialize first");
  return *l.runtime;
}

}  // namespace korch::c_api
