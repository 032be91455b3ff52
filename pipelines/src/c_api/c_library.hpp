// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal to the C API (korch/korch_c.h): the objects behind its handles (c_handles.hpp), the
// library's one runtime, and `guarded`, which turns any exception of an entry point into a status
// and the calling thread's last error message.
#pragma once

#include "c_handles.hpp"

#include <korch/block_list.hpp>
#include <korch/bundle.hpp>
#include <korch/communicator.hpp>
#include <korch/configuration.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>
#include <korch/korch_c.h>
#include <korch/runtime.hpp>

#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace korch::c_api {

struct BlocksObject : HandleObject {
  static constexpr HandleKind kind = HandleKind::blocks;
  BlocksObject(const std::string& name, int n_vars, int n_face_vars = 0) : list(name, n_vars, n_face_vars) {
    label = "korch_blocks '" + excerpt(name) + "'";
  }
  BlockList list;
};
struct BundleObject : HandleObject {
  static constexpr HandleKind kind = HandleKind::bundle;
  explicit BundleObject(Bundle b) : bundle(std::move(b)) { label = "korch_bundle '" + excerpt(bundle.name()) + "'"; }
  Bundle bundle;
};
// The variables an action reads and writes (korch_configuration_packet_variables).
struct ActionVariables {
  std::vector<int> reads;
  std::vector<int> writes;
};
struct ConfigurationObject : HandleObject {
  static constexpr HandleKind kind = HandleKind::configuration;
  explicit ConfigurationObject(Configuration c) : configuration(c), original(std::move(c)) {
    label = "korch_configuration '" + excerpt(configuration.name) + "'";
  }
  Configuration configuration;                      // what cycles run: `original` with the packets' variables derived
  Configuration original;                           // as made (built-in, bound or JSON)
  std::map<std::string, ActionVariables> declared;  // by action
};

struct Library {
  std::mutex mutex;  // initialize / finalize, and the count of cycles below
  std::unique_ptr<Runtime> runtime;
  unsigned cycles_running = 0;  // korch_execute calls inside the runtime: finalize waits for none
  bool kokkos_ours = false;
  std::unique_ptr<MpiSession> mpi;           // korch_start_mpi
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

// The communicator korch uses: the code's own (korch_use_communicator), or MPI_COMM_WORLD.
Communicator communicator();

// The runtime, for one cycle: korch_finalize refuses to destroy it while a RuntimeUse lives.
class RuntimeUse {
 public:
  RuntimeUse();
  ~RuntimeUse();
  RuntimeUse(const RuntimeUse&) = delete;
  RuntimeUse& operator=(const RuntimeUse&) = delete;
  Runtime& runtime() const noexcept { return *runtime_; }

 private:
  Runtime* runtime_;
};

}  // namespace korch::c_api
