// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API (korch/korch_c.h, docs/c-api.md). It sits above the whole library (it names the
// built-in configurations), so it is built with the pipelines layer. Every entry point runs its body
// through `guarded`, which turns any exception into a status and the thread's last error message.
#include "c_item.hpp"
#include "c_library.hpp"

#include <korch/block_iterators.hpp>
#include <korch/block_list.hpp>
#include <korch/bundle.hpp>
#include <korch/configuration.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>
#include <korch/korch_c.h>
#include <korch/runtime.hpp>

#include <Kokkos_Core.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

namespace korch::c_api {

Library& library() {
  static Library l;
  return l;
}

std::string& last_error() {
  thread_local std::string text;
  return text;
}

RuntimeUse::RuntimeUse() {
  refuse_inside_routine("a cycle cannot start another; call korch_execute after this one returns");
  auto& l = library();
  std::lock_guard<std::mutex> lock(l.mutex);
  if (!l.runtime) throw Error("korch is not initialized: call korch_initialize first");
  runtime_ = l.runtime.get();
  ++l.cycles_running;
}

RuntimeUse::~RuntimeUse() {
  auto& l = library();
  std::lock_guard<std::mutex> lock(l.mutex);
  --l.cycles_running;
}

}  // namespace korch::c_api

namespace {

using korch::c_api::BlocksObject;
using korch::c_api::BundleObject;
using korch::c_api::ConfigurationObject;
using korch::c_api::guarded;
using korch::c_api::Lease;
using korch::c_api::library;
using korch::c_api::object_of;
using korch::c_api::require;
using korch::c_api::require_text;

// The array strides of a block's cells (axis -1) or of its faces across `axis` in `order`, after
// checking the declared extent against the shape.
korch::BlockArray block_array(const korch::BlockList& list, const korch_block_shape& s, double* data,
                              const int64_t extent[4], int32_t order, bool device, int axis = -1) {
  static const char* axis_name[3] = {"x", "y", "z"};
  const std::string what = axis < 0 ? fmt::format("block {}", list.n_blocks())
                                    : fmt::format("block {}'s face array across {}", list.n_blocks(), axis_name[axis]);
  if (data == nullptr) throw korch::Error::format("{}: {}: the data is NULL: pass the array", list.source_name(), what);
  if (extent == nullptr) throw korch::Error::format("{}: extent is NULL: pass the array's shape", list.source_name());
  if (order != KORCH_FORTRAN_ORDER && order != KORCH_C_ORDER)
    throw korch::Error::format("{}: order is {}: use KORCH_FORTRAN_ORDER ({}) or KORCH_C_ORDER ({})",
                               list.source_name(), order, static_cast<int>(KORCH_FORTRAN_ORDER),
                               static_cast<int>(KORCH_C_ORDER));
  int64_t want[3] = {int64_t{s.cells[0]} + 2 * s.guard[0], int64_t{s.cells[1]} + 2 * s.guard[1],
                     int64_t{s.cells[2]} + 2 * s.guard[2]};
  if (axis >= 0) want[axis] += 1;  // one more face than cells along the axis
  const int64_t n = axis < 0 ? list.n_vars() : list.n_face_vars();
  const bool fortran = order == KORCH_FORTRAN_ORDER;
  // Fortran: (i, j, k, var); C: (var, i, j, k).
  const int64_t expected[4] = {fortran ? want[0] : n, fortran ? want[1] : want[0], fortran ? want[2] : want[1],
                               fortran ? n : want[2]};
  if (!std::equal(expected, expected + 4, extent))
    throw korch::Error::format(
        "{}: {} has shape ({}, {}, {}, {}) but the block's shape says ({}, {}, {}, {}) ({}: cells {} x {} x {} "
        "with {} x {} x {} guard cells per side{} and {} {}variables)",
        list.source_name(), what, extent[0], extent[1], extent[2], extent[3], expected[0], expected[1], expected[2],
        expected[3], fortran ? "i, j, k, var" : "var, i, j, k", s.cells[0], s.cells[1], s.cells[2], s.guard[0],
        s.guard[1], s.guard[2], axis < 0 ? "" : ", one more face than cells along the axis", n,
        axis < 0 ? "" : "face ");
  korch::BlockArray a;
  a.data = data;
  a.device = device;
  a.extent = {static_cast<std::ptrdiff_t>(n), static_cast<std::ptrdiff_t>(want[0]),
              static_cast<std::ptrdiff_t>(want[1]), static_cast<std::ptrdiff_t>(want[2])};
  if (fortran) {
    a.stride = {static_cast<std::ptrdiff_t>(want[0] * want[1] * want[2]), 1, static_cast<std::ptrdiff_t>(want[0]),
                static_cast<std::ptrdiff_t>(want[0] * want[1])};
  } else {
    a.stride = {static_cast<std::ptrdiff_t>(want[0] * want[1] * want[2]),
                static_cast<std::ptrdiff_t>(want[1] * want[2]), static_cast<std::ptrdiff_t>(want[2]), 1};
  }
  return a;
}

// The face arrays of a block (none across an axis along which it stores one cell).
korch::BlockList::FaceArrays face_arrays(const korch::BlockList& list, const korch_block_shape& s,
                                         double* const face_data[3], const int64_t face_extent[12], int32_t order) {
  korch::BlockList::FaceArrays faces;
  if (list.n_face_vars() == 0)
    throw korch::Error::format(
        "{}: block {} comes with face arrays, but the list has no face variables: create it with "
        "korch_blocks_create_with_faces",
        list.source_name(), list.n_blocks());
  if (face_data == nullptr)
    throw korch::Error::format(
        "{}: block {} comes without face arrays, but the list has {} face variables: add it with "
        "korch_blocks_add_with_faces",
        list.source_name(), list.n_blocks(), list.n_face_vars());
  if (face_extent == nullptr)
    throw korch::Error::format("{}: face_extent is NULL: pass the shapes of the block's face arrays",
                               list.source_name());
  for (int a = 0; a < 3; ++a)
    if (s.cells[a] + 2 * s.guard[a] > 1 || face_data[a] != nullptr)
      faces[static_cast<std::size_t>(a)] = block_array(list, s, face_data[a], face_extent + 4 * a, order, false, a);
  return faces;
}

// Appends a block after checking its shape, then its array against the shape.
void add_block(korch_blocks* blocks, const korch_block_shape* shape, int32_t global_id, double* data,
               const int64_t extent[4], int32_t order, int32_t* id, bool device = false,
               double* const* face_data = nullptr, const int64_t* face_extent = nullptr) {
  const Lease changing = korch::c_api::lease<BlocksObject>(blocks, "blocks", Lease::exclusive, "change");
  auto& list = object_of<BlocksObject>(changing).list;
  const auto& s = require(shape, "shape", "describe the block in a korch_block_shape");
  korch::BlockShape k;
  for (int d = 0; d < 3; ++d) {
    k.cells[d] = s.cells[d];
    k.guard[d] = s.guard[d];
    k.tile_cells[d] = s.tile_cells[d];
    k.lo_coord[d] = s.lo_coord[d];
    k.delta[d] = s.delta[d];
    k.index[d] = s.position[d];
  }
  k.level = s.level;
  k.leaf = s.leaf != 0;
  k.global_id = global_id;
  list.check_shape(k);  // the shape's own fields first (their errors name them), then the array
  const korch::BlockArray cells = block_array(list, s, data, extent, order, device);
  const int added = list.n_face_vars() == 0 && face_data == nullptr
                        ? list.add(k, cells)
                        : list.add(k, cells, face_arrays(list, s, face_data, face_extent, order));
  if (id) *id = added;
}

}  // namespace

extern "C" {

int korch_initialize(const korch_options* options) {
  return guarded("korch_initialize", [&] {
    korch::c_api::refuse_inside_routine("korch is already initialized and in use by this cycle");
    auto& l = library();
    std::lock_guard<std::mutex> lock(l.mutex);
    if (l.runtime) throw korch::Error("korch is already initialized: call korch_finalize before initializing again");
    korch::RuntimeOptions o;
    if (options) {
      const int32_t fields[4] = {options->n_teams, options->threads_per_team, options->n_helpers,
                                 options->helper_threads};
      static const char* names[4] = {"n_teams", "threads_per_team", "n_helpers", "helper_threads"};
      for (int f = 0; f < 4; ++f)
        if (fields[f] < 0)
          throw korch::Error::format("options.{} is {}: use 0 (the default) or more", names[f], fields[f]);
      if (options->n_teams > 0) o.n_teams = static_cast<unsigned>(options->n_teams);
      if (options->threads_per_team > 0) o.threads_per_team = static_cast<unsigned>(options->threads_per_team);
      if (options->n_helpers > 0) o.n_helpers = static_cast<unsigned>(options->n_helpers);
      if (options->helper_threads > 0) o.helper_threads = static_cast<unsigned>(options->helper_threads);
    }
    if (!Kokkos::is_initialized()) {
      Kokkos::initialize();
      l.kokkos_ours = true;
    }
    l.runtime = std::make_unique<korch::Runtime>(o);
  });
}

int korch_finalize(void) {
  return guarded("korch_finalize", [&] {
    korch::c_api::refuse_inside_routine(
        "the cycle needs the runtime until it ends; call korch_finalize after korch_execute returns");
    auto& l = library();
    std::lock_guard<std::mutex> lock(l.mutex);
    if (!l.runtime) throw korch::Error("korch is not initialized: nothing to finalize");
    if (l.cycles_running > 0)
      throw korch::Error::format(
          "{} cycle(s) of korch_execute are running on other threads: call korch_finalize "
          "after they return",
          l.cycles_running);
    l.runtime.reset();
    if (l.kokkos_ours) {
      Kokkos::finalize();
      l.kokkos_ours = false;
    }
    l.communicator.reset();
    l.mpi.reset();  // finalizes MPI if korch_start_mpi initialized it
  });
}

int korch_blocks_create(const char* name, int32_t n_vars, korch_blocks** out) {
  return guarded("korch_blocks_create", [&] {
    require(out, "out", "pass the address of a korch_blocks pointer");
    *out = nullptr;
    *out = korch::c_api::make_handle<BlocksObject, korch_blocks>(
        std::make_shared<BlocksObject>(require_text(name, "name"), n_vars));
  });
}

int korch_blocks_create_with_faces(const char* name, int32_t n_vars, int32_t n_face_vars, korch_blocks** out) {
  return guarded("korch_blocks_create_with_faces", [&] {
    require(out, "out", "pass the address of a korch_blocks pointer");
    *out = nullptr;
    *out = korch::c_api::make_handle<BlocksObject, korch_blocks>(
        std::make_shared<BlocksObject>(require_text(name, "name"), n_vars, n_face_vars));
  });
}

int korch_blocks_add_with_faces(korch_blocks* blocks, const korch_block_shape* shape, int32_t global_id, double* data,
                                const int64_t extent[4], double* const face_data[3], const int64_t face_extent[12],
                                int32_t order, int32_t* id) {
  return guarded("korch_blocks_add_with_faces", [&] {
    if (global_id < -1)
      throw korch::Error::format(
          "global_id is {}: give every block of every rank its own id, 0 or more, or -1 for the block's id in this "
          "list",
          global_id);
    if (face_data == nullptr)
      throw korch::Error(
          "face_data is NULL: pass the block's three face arrays (NULL across an axis along which it stores one "
          "cell)");
    add_block(blocks, shape, global_id, data, extent, order, id, false, face_data, face_extent);
  });
}

int korch_blocks_add(korch_blocks* blocks, const korch_block_shape* shape, double* data, const int64_t extent[4],
                     int32_t order, int32_t* id) {
  return guarded("korch_blocks_add", [&] { add_block(blocks, shape, -1, data, extent, order, id); });
}

int korch_blocks_add_global(korch_blocks* blocks, const korch_block_shape* shape, int32_t global_id, double* data,
                            const int64_t extent[4], int32_t order, int32_t* id) {
  return guarded("korch_blocks_add_global", [&] {
    if (global_id < 0)
      throw korch::Error::format("global_id is {}: give every block of every rank its own id, 0 or more", global_id);
    add_block(blocks, shape, global_id, data, extent, order, id);
  });
}

int korch_blocks_add_device(korch_blocks* blocks, const korch_block_shape* shape, int32_t global_id,
                            double* device_data, const int64_t extent[4], int32_t order, int32_t* id) {
  return guarded("korch_blocks_add_device", [&] {
    if (global_id < -1)
      throw korch::Error::format(
          "global_id is {}: give every block of every rank its own id, 0 or more, or -1 for the block's id in this "
          "list",
          global_id);
    add_block(blocks, shape, global_id, device_data, extent, order, id, true);
  });
}

int korch_blocks_clear(korch_blocks* blocks) {
  return guarded("korch_blocks_clear", [&] {
    const Lease changing = korch::c_api::lease<BlocksObject>(blocks, "blocks", Lease::exclusive, "change");
    object_of<BlocksObject>(changing).list.clear();
  });
}

int korch_blocks_destroy(korch_blocks* blocks) {
  return guarded("korch_blocks_destroy", [&] {
    korch::c_api::remove_handle(reinterpret_cast<std::uintptr_t>(blocks), BlocksObject::kind, "blocks");
  });
}

int korch_bundle_create(const char* name, korch_bundle** out) {
  return guarded("korch_bundle_create", [&] {
    require(out, "out", "pass the address of a korch_bundle pointer");
    *out = nullptr;
    *out = korch::c_api::make_handle<BundleObject, korch_bundle>(
        std::make_shared<BundleObject>(korch::Bundle(require_text(name, "name"))));
  });
}

int korch_bundle_add(korch_bundle* bundle, const char* action, korch_action_fn routine, void* user) {
  return guarded("korch_bundle_add", [&] {
    const Lease changing = korch::c_api::lease<BundleObject>(bundle, "bundle", Lease::exclusive, "change");
    auto& b = object_of<BundleObject>(changing).bundle;
    const std::string name = require_text(action, "action");
    if (routine == nullptr)
      throw korch::Error::format("routine of action '{}' is NULL: pass the routine's address", korch::excerpt(name));
    b.add(korch::c_api::routine(name, routine, user));
  });
}

int korch_bundle_destroy(korch_bundle* bundle) {
  return guarded("korch_bundle_destroy", [&] {
    korch::c_api::remove_handle(reinterpret_cast<std::uintptr_t>(bundle), BundleObject::kind, "bundle");
  });
}

int korch_configuration_builtin(const char* name, korch_configuration** out) {
  return guarded("korch_configuration_builtin", [&] {
    require(out, "out", "pass the address of a korch_configuration pointer");
    *out = nullptr;
    *out = korch::c_api::make_handle<ConfigurationObject, korch_configuration>(
        std::make_shared<ConfigurationObject>(korch::configurations::get(require_text(name, "name"))));
  });
}

int korch_configuration_json(const char* json, korch_configuration** out) {
  return guarded("korch_configuration_json", [&] {
    require(out, "out", "pass the address of a korch_configuration pointer");
    *out = nullptr;
    *out = korch::c_api::make_handle<ConfigurationObject, korch_configuration>(
        std::make_shared<ConfigurationObject>(korch::Configuration::from_json(require_text(json, "json"))));
  });
}

int korch_configuration_destroy(korch_configuration* configuration) {
  return guarded("korch_configuration_destroy", [&] {
    korch::c_api::remove_handle(reinterpret_cast<std::uintptr_t>(configuration), ConfigurationObject::kind,
                                "configuration");
  });
}

int korch_execute(const korch_bundle* bundle, const korch_configuration* configuration, korch_blocks* blocks,
                  int32_t iterator, int32_t level) {
  return guarded("korch_execute", [&] {
    const Lease b = korch::c_api::lease<BundleObject>(bundle, "bundle", Lease::shared, "use");
    const Lease c = korch::c_api::lease<ConfigurationObject>(configuration, "configuration", Lease::shared, "use");
    const Lease list = korch::c_api::lease<BlocksObject>(blocks, "blocks", Lease::shared, "use");
    korch::AllBlocks all;
    korch::LeafBlocks leaves;
    korch::LevelBlocks one_level(level);
    korch::BlockIterator* order = nullptr;
    switch (iterator) {
      case KORCH_ALL_BLOCKS: order = &all; break;
      case KORCH_LEAF_BLOCKS: order = &leaves; break;
      case KORCH_LEVEL_BLOCKS: order = &one_level; break;
      default:
        throw korch::Error::format(
            "iterator is {}: use KORCH_ALL_BLOCKS ({}), KORCH_LEAF_BLOCKS ({}) or KORCH_LEVEL_BLOCKS ({})", iterator,
            static_cast<int>(KORCH_ALL_BLOCKS), static_cast<int>(KORCH_LEAF_BLOCKS),
            static_cast<int>(KORCH_LEVEL_BLOCKS));
    }
    const korch::c_api::RuntimeUse use;
    korch::c_api::check_c_routines(object_of<ConfigurationObject>(c).configuration, object_of<BundleObject>(b).bundle);
    use.runtime().execute(object_of<BundleObject>(b).bundle, object_of<ConfigurationObject>(c).configuration,
                          object_of<BlocksObject>(list).list, order);
  });
}

const char* korch_last_error(void) { return korch::c_api::last_error().c_str(); }

size_t korch_copy_last_error(char* buffer, size_t capacity) {
  const std::string& last_error = korch::c_api::last_error();
  if (buffer != nullptr && capacity > 0) {
    const size_t n = std::min(capacity - 1, last_error.size());
    std::memcpy(buffer, last_error.data(), n);
    buffer[n] = '\0';
  }
  return last_error.size();
}

void korch_routine_message(const char* message) { korch::c_api::set_routine_message(message); }

}  // extern "C"
