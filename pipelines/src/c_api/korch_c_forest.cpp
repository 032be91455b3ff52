// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API's fill across levels of a code's own adaptive mesh (korch/korch_c.h, docs/c-api.md "A
// code's own adaptive mesh"): korch::ForestBlocks behind a handle, its cycles run in the order of a
// korch::ForestFillIterator.
#include "c_item.hpp"
#include "c_library.hpp"

#include <korch/forest_blocks.hpp>
#include <korch/forest_fill_iterator.hpp>

#include <memory>
#include <string>

namespace korch::c_api {

// Keeps its blocks alive (destroying their handle first leaves them to this object).
struct ForestObject : HandleObject {
  static constexpr HandleKind kind = HandleKind::forest;
  std::shared_ptr<BlocksObject> blocks;
  std::unique_ptr<ForestBlocks> forest;
};

}  // namespace korch::c_api

namespace {

using korch::c_api::BlocksObject;
using korch::c_api::BundleObject;
using korch::c_api::ConfigurationObject;
using korch::c_api::ForestObject;
using korch::c_api::guarded;
using korch::c_api::Lease;
using korch::c_api::object_of;
using korch::c_api::require;

korch::ForestShape tree_shape(int32_t dims, const int32_t roots[3], const int32_t periodic[3], int32_t max_level) {
  require(roots, "roots", "pass the root blocks per axis (3 numbers, 1 beyond dims)");
  require(periodic, "periodic", "pass 3 flags, 1 for a periodic axis and 0 otherwise");
  korch::ForestShape s;
  s.dims = dims;
  s.max_level = max_level;
  for (int a = 0; a < 3; ++a) {
    if (periodic[a] != 0 && periodic[a] != 1)
      throw korch::Error::format("periodic[{}] is {}: give 1 for a periodic axis, 0 otherwise", a, periodic[a]);
    s.roots[a] = roots[a];
    s.periodic[a] = periodic[a] == 1;
  }
  return s;
}

}  // namespace

extern "C" {

int korch_forest_create(korch_blocks* blocks, int32_t dims, const int32_t roots[3], const int32_t periodic[3],
                        int32_t max_level, korch_forest** out) {
  return guarded("korch_forest_create", [&] {
    require(out, "out", "pass the address of a korch_forest pointer");
    *out = nullptr;
    const korch::ForestShape shape = tree_shape(dims, roots, periodic, max_level);
    const auto b = std::static_pointer_cast<BlocksObject>(
        korch::c_api::find_handle(reinterpret_cast<std::uintptr_t>(blocks), BlocksObject::kind, "blocks"));
    const Lease list(b, Lease::shared, "use");
    auto f = std::make_shared<ForestObject>();
    f->label = "korch_forest of " + b->label;
    f->blocks = b;
    f->forest = std::make_unique<korch::ForestBlocks>(b->list, shape, korch::c_api::communicator());
    *out = korch::c_api::make_handle<ForestObject, korch_forest>(std::move(f));
  });
}

int korch_forest_relist(korch_forest* forest) {
  return guarded("korch_forest_relist", [&] {
    const Lease f = korch::c_api::lease<ForestObject>(forest, "forest", Lease::exclusive, "change");
    ForestObject& object = object_of<ForestObject>(f);
    const Lease list(object.blocks, Lease::shared, "use");
    object.forest->relist();
  });
}

int korch_forest_fill(korch_forest* forest) {
  return guarded("korch_forest_fill", [&] {
    const Lease f = korch::c_api::lease<ForestObject>(forest, "forest", Lease::exclusive, "use");
    ForestObject& object = object_of<ForestObject>(f);
    const Lease list(object.blocks, Lease::shared, "use");
    object.forest->fill_guard_cells();
  });
}

int korch_execute_forest(const korch_bundle* bundle, const korch_configuration* configuration, korch_forest* forest,
                         int32_t first_var, int32_t n_vars) {
  return guarded("korch_execute_forest", [&] {
    const Lease b = korch::c_api::lease<BundleObject>(bundle, "bundle", Lease::shared, "use");
    const Lease c = korch::c_api::lease<ConfigurationObject>(configuration, "configuration", Lease::shared, "use");
    const Lease f = korch::c_api::lease<ForestObject>(forest, "forest", Lease::exclusive, "use");
    ForestObject& object = object_of<ForestObject>(f);
    const Lease list(object.blocks, Lease::shared, "use");
    korch::ForestFillIterator leaves(*object.forest, first_var, n_vars);
    const korch::c_api::RuntimeUse use;
    korch::c_api::check_c_routines(object_of<ConfigurationObject>(c).configuration, object_of<BundleObject>(b).bundle);
    use.runtime().execute(object_of<BundleObject>(b).bundle, object_of<ConfigurationObject>(c).configuration,
                          object.blocks->list, &leaves);
  });
}

int korch_forest_destroy(korch_forest* forest) {
  return guarded("korch_forest_destroy", [&] {
    korch::c_api::remove_handle(reinterpret_cast<std::uintptr_t>(forest), ForestObject::kind, "forest");
  });
}

}  // extern "C"
