// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API's ranks and guard cells (korch/korch_c.h, docs/c-api.md "Ranks and guard cells"):
// MPI started by korch or the code's own communicator, neighbour lists, and the guard-cell exchange
// filled at once, block by block, or inside a cycle.
#include "c_item.hpp"
#include "c_library.hpp"

#include <korch/block_neighbours.hpp>
#include <korch/guard_cell_exchange.hpp>
#include <korch/guard_cell_iterator.hpp>

#include <array>
#include <mutex>
#include <string>

namespace korch::c_api {

struct NeighboursObject : HandleObject {
  static constexpr HandleKind kind = HandleKind::neighbours;
  explicit NeighboursObject(int dims) : list(dims) { label = "korch_neighbours"; }
  NeighbourList list;
};
// The exchange keeps its blocks alive (destroying their handle first leaves them to the exchange),
// and leases them for each fill, so that they do not change under it. A failure of the code's
// boundary fill is kept until the fill is over (its messages received and sent), then reported: so
// no message of a failed fill is left in flight to meet a later one.
struct ExchangeObject : HandleObject {
  static constexpr HandleKind kind = HandleKind::exchange;
  std::shared_ptr<BlocksObject> blocks;
  std::unique_ptr<GuardCellExchange> exchange;
  std::unique_ptr<GuardCellIterator> order;
  std::array<int, 3> width{-1, -1, -1};  // as korch_exchange_create was given
  std::string first_user;                // the first entry of the lists marked USER, "" if none
  bool has_fill = false;                 // korch_exchange_set_boundary_fill gave a routine
  std::mutex failure_mutex;
  std::string failure;  // the boundary fill's first failure in this fill, "" if none
};

}  // namespace korch::c_api

namespace korch::c_api {

Communicator communicator() {
  auto& l = library();
  return l.communicator ? *l.communicator : Communicator::world();
}

}  // namespace korch::c_api

namespace {

using korch::c_api::BlocksObject;
using korch::c_api::BundleObject;
using korch::c_api::communicator;
using korch::c_api::ConfigurationObject;
using korch::c_api::ExchangeObject;
using korch::c_api::guarded;
using korch::c_api::Lease;
using korch::c_api::library;
using korch::c_api::NeighboursObject;
using korch::c_api::object_of;
using korch::c_api::require;

// The exchange of a live handle, held by the calling thread alone for the call, and its blocks
// leased as `blocks_mode` (exclusive for a fill, which writes their guard cells).
struct ExchangeUse {
  ExchangeUse(korch_exchange* handle, Lease::Mode blocks_mode)
      : exchange(korch::c_api::lease<ExchangeObject>(handle, "exchange", Lease::exclusive, "use")),
        blocks(object_of<ExchangeObject>(exchange).blocks, blocks_mode, "fill the guard cells of") {}
  ExchangeObject& operator*() const { return object_of<ExchangeObject>(exchange); }
  ExchangeObject* operator->() const { return &object_of<ExchangeObject>(exchange); }
  Lease exchange;
  Lease blocks;
};

// The first entry of `list` marked user(), as messages name it ("" if none).
std::string first_user_entry(const korch::NeighbourList& list) {
  for (int b = 0; b < list.n_blocks(); ++b)
    for (const auto& d : korch::NeighbourList::directions(list.dims()))
      if (list.get(b, d).kind == korch::Neighbour::Kind::user)
        return "block " + std::to_string(b) + " in direction " + korch::NeighbourList::name(d);
  return {};
}

// Refuses a fill whose lists name USER without the code's boundary fill.
void require_boundary_fill(const ExchangeObject& e) {
  if (!e.has_fill && !e.first_user.empty())
    throw korch::Error::format(
        "{}: its neighbour lists mark {} KORCH_NEIGHBOUR_USER, but no boundary fill is set: call "
        "korch_exchange_set_boundary_fill first",
        e.label, e.first_user);
}

// The guard cells of `block` beyond its faces in `direction`, `width` per side (-1: its own guard
// cells), block-local.
korch::Box user_region(const korch::BlockMeta& m, const korch::Direction& direction, const std::array<int, 3>& width) {
  korch::Box box = m.interior;
  for (std::size_t a = 0; a < 3; ++a) {
    const int w = width[a] < 0 ? m.interior.lo[a] - m.stored.lo[a] : width[a];
    if (direction[a] < 0) {
      box.lo[a] = m.interior.lo[a] - w;
      box.hi[a] = m.interior.lo[a];
    } else if (direction[a] > 0) {
      box.lo[a] = m.interior.hi[a];
      box.hi[a] = m.interior.hi[a] + w;
    }
  }
  return box;
}

// The C++ boundary fill that calls the code's routine; the first non-zero status of a fill is kept
// in e.failure, and the routine is not called again in that fill.
korch::GuardCellExchange::BoundaryFill c_boundary_fill(ExchangeObject& e, korch_boundary_fn fill, void* user) {
  return [&e, fill, user](int block, const korch::Direction& d, int first, int count) {
    {
      const std::lock_guard<std::mutex> lock(e.failure_mutex);
      if (!e.failure.empty()) return;
    }
    const korch::BlockList& list = e.blocks->list;
    const korch::BlockMeta& m = list.block(block);
    const korch::BlockView view = list.block_view(block);
    const korch_item region = korch::c_api::describe(list, block, -1, user_region(m, d, e.width), view);
    const int32_t direction[3] = {d[0], d[1], d[2]};
    std::string message;
    const int status = korch::c_api::call_user_routine(
        "boundary fill", [&] { return fill(&region, direction, first, count, view.data(), user); }, message);
    if (status == 0) return;
    const std::lock_guard<std::mutex> lock(e.failure_mutex);
    e.failure = korch::Error::format(
                    "the boundary fill returned status {} on block {} (global id {}) of {} in direction {}, "
                    "variables {}..{}{}{}",
                    status, block, m.global_id, list.source_name(), korch::NeighbourList::name(d), first,
                    first + count - 1, message.empty() ? "" : ": ", message)
                    .what();
  };
}

// Forgets the failure of an earlier fill.
void clear_failure(ExchangeObject& e) {
  const std::lock_guard<std::mutex> lock(e.failure_mutex);
  e.failure.clear();
}

// Throws the boundary fill's failure in the fill that just ended, if any.
void report_failure(ExchangeObject& e) {
  std::string failure;
  {
    const std::lock_guard<std::mutex> lock(e.failure_mutex);
    failure.swap(e.failure);
  }
  if (!failure.empty()) throw korch::Error(failure);
}

}  // namespace

extern "C" {

int korch_start_mpi(void) {
  return guarded("korch_start_mpi", [&] {
    korch::c_api::refuse_inside_routine("call korch_start_mpi before korch_execute");
    auto& l = library();
    std::lock_guard<std::mutex> lock(l.mutex);
    if (!l.mpi) l.mpi = std::make_unique<korch::MpiSession>(nullptr, nullptr);
  });
}

int korch_use_communicator(int32_t fortran_handle) {
  return guarded("korch_use_communicator", [&] {
    korch::c_api::refuse_inside_routine("call korch_use_communicator before korch_execute");
    auto& l = library();
    std::lock_guard<std::mutex> lock(l.mutex);
    l.communicator = korch::Communicator::from_handle(fortran_handle);
  });
}

int korch_ranks(int32_t* rank, int32_t* size) {
  return guarded("korch_ranks", [&] {
    const korch::Communicator c = communicator();
    if (rank) *rank = c.rank();
    if (size) *size = c.size();
  });
}

int korch_neighbours_create(int32_t dims, korch_neighbours** out) {
  return guarded("korch_neighbours_create", [&] {
    require(out, "out", "pass the address of a korch_neighbours pointer");
    *out = nullptr;
    *out = korch::c_api::make_handle<NeighboursObject, korch_neighbours>(std::make_shared<NeighboursObject>(dims));
  });
}

int korch_neighbours_set(korch_neighbours* neighbours, int32_t block, const int32_t direction[3], int32_t kind,
                         int32_t global_id, int32_t rank) {
  return guarded("korch_neighbours_set", [&] {
    const Lease changing = korch::c_api::lease<NeighboursObject>(neighbours, "neighbours", Lease::exclusive, "change");
    auto& list = object_of<NeighboursObject>(changing).list;
    require(direction, "direction", "pass three components, each -1, 0 or +1");
    korch::Neighbour n;
    switch (kind) {
      case KORCH_NEIGHBOUR_BLOCK: n = korch::Neighbour::block(global_id, rank); break;
      case KORCH_NEIGHBOUR_OUTFLOW: n = korch::Neighbour::outflow(); break;
      case KORCH_NEIGHBOUR_NONE: n = korch::Neighbour::none(); break;
      case KORCH_NEIGHBOUR_USER: n = korch::Neighbour::user(); break;
      default:
        throw korch::Error::format(
            "kind is {}: use KORCH_NEIGHBOUR_BLOCK ({}), KORCH_NEIGHBOUR_OUTFLOW ({}), "
            "KORCH_NEIGHBOUR_NONE ({}) or KORCH_NEIGHBOUR_USER ({})",
            kind, static_cast<int>(KORCH_NEIGHBOUR_BLOCK), static_cast<int>(KORCH_NEIGHBOUR_OUTFLOW),
            static_cast<int>(KORCH_NEIGHBOUR_NONE), static_cast<int>(KORCH_NEIGHBOUR_USER));
    }
    list.set(block, {direction[0], direction[1], direction[2]}, n);
  });
}

int korch_neighbours_destroy(korch_neighbours* neighbours) {
  return guarded("korch_neighbours_destroy", [&] {
    korch::c_api::remove_handle(reinterpret_cast<std::uintptr_t>(neighbours), NeighboursObject::kind, "neighbours");
  });
}

int korch_exchange_create(korch_blocks* blocks, const korch_neighbours* neighbours, const int32_t width[3],
                          korch_exchange** out) {
  return guarded("korch_exchange_create", [&] {
    require(out, "out", "pass the address of a korch_exchange pointer");
    *out = nullptr;
    const auto b = std::static_pointer_cast<BlocksObject>(
        korch::c_api::find_handle(reinterpret_cast<std::uintptr_t>(blocks), BlocksObject::kind, "blocks"));
    const Lease reading(b, Lease::shared, "use");
    const Lease n = korch::c_api::lease<NeighboursObject>(neighbours, "neighbours", Lease::shared, "use");
    std::array<int, 3> w{-1, -1, -1};
    if (width) w = {width[0], width[1], width[2]};
    auto e = std::make_shared<ExchangeObject>();
    e->label = "korch_exchange of " + b->label;
    e->blocks = b;
    e->width = w;
    e->first_user = first_user_entry(object_of<NeighboursObject>(n).list);
    e->exchange =
        std::make_unique<korch::GuardCellExchange>(b->list, object_of<NeighboursObject>(n).list, communicator(), w);
    e->order = std::make_unique<korch::GuardCellIterator>(*e->exchange, 0, 1);
    *out = korch::c_api::make_handle<ExchangeObject, korch_exchange>(std::move(e));
  });
}

int korch_exchange_fill(korch_exchange* exchange, int32_t first_var, int32_t n_vars) {
  return guarded("korch_exchange_fill", [&] {
    const ExchangeUse e(exchange, Lease::exclusive);
    require_boundary_fill(*e);
    clear_failure(*e);
    e->exchange->fill(first_var, n_vars);
    report_failure(*e);
  });
}

int korch_exchange_start(korch_exchange* exchange, int32_t first_var, int32_t n_vars) {
  return guarded("korch_exchange_start", [&] {
    const ExchangeUse e(exchange, Lease::exclusive);
    require_boundary_fill(*e);
    clear_failure(*e);
    e->order->set_variables(first_var, n_vars);
    e->order->begin(e->blocks->list);
  });
}

int korch_exchange_next(korch_exchange* exchange, int32_t* block) {
  return guarded("korch_exchange_next", [&] {
    const ExchangeUse use(exchange, Lease::exclusive);
    ExchangeObject& e = *use;
    require(block, "block", "pass the address of an int32_t");
    if (!e.exchange->in_progress())
      throw korch::Error("the exchange has no fill in progress: call korch_exchange_start first");
    *block = -1;
    try {
      if (const auto b = e.order->next()) *block = *b;
      bool failed = false;
      {
        const std::lock_guard<std::mutex> lock(e.failure_mutex);
        failed = !e.failure.empty();
      }
      if (failed) {  // ends the fill first, then reports
        *block = -1;
        while (e.order->next()) {
        }
        report_failure(e);
      }
    } catch (...) {
      e.order->abandon();
      throw;
    }
  });
}

int korch_exchange_destroy(korch_exchange* exchange) {
  return guarded("korch_exchange_destroy", [&] {
    korch::c_api::remove_handle(reinterpret_cast<std::uintptr_t>(exchange), ExchangeObject::kind, "exchange");
  });
}

int korch_exchange_set_boundary_fill(korch_exchange* exchange, korch_boundary_fn fill, void* user) {
  return guarded("korch_exchange_set_boundary_fill", [&] {
    const Lease changing = korch::c_api::lease<ExchangeObject>(exchange, "exchange", Lease::exclusive, "change");
    auto& e = object_of<ExchangeObject>(changing);
    if (e.exchange->in_progress())
      throw korch::Error::format("{} has a fill in progress: set its boundary fill before korch_exchange_start",
                                 e.label);
    e.exchange->set_boundary_fill(fill ? c_boundary_fill(e, fill, user) : nullptr);
    e.has_fill = fill != nullptr;
  });
}

int korch_execute_filled(const korch_bundle* bundle, const korch_configuration* configuration, korch_exchange* exchange,
                         int32_t first_var, int32_t n_vars) {
  return guarded("korch_execute_filled", [&] {
    const Lease b = korch::c_api::lease<BundleObject>(bundle, "bundle", Lease::shared, "use");
    const Lease c = korch::c_api::lease<ConfigurationObject>(configuration, "configuration", Lease::shared, "use");
    const ExchangeUse e(exchange, Lease::shared);  // its fill writes guard cells only, as the cycle runs
    require_boundary_fill(*e);
    clear_failure(*e);
    e->order->set_variables(first_var, n_vars);
    const korch::c_api::RuntimeUse use;
    korch::c_api::check_c_routines(object_of<ConfigurationObject>(c).configuration, object_of<BundleObject>(b).bundle);
    use.runtime().execute(object_of<BundleObject>(b).bundle, object_of<ConfigurationObject>(c).configuration,
                          e->blocks->list, e->order.get());
    report_failure(*e);
  });
}

}  // extern "C"
