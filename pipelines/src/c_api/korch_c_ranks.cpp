// The C API's ranks and guard cells (korch/korch_c.h, docs/c-api.md "Ranks and guard cells"):
// MPI started by korch or the code's own communicator, neighbour lists, and the guard-cell exchange
// filled at once, block by block, or inside a cycle.
#include "c_library.hpp"

#include <korch/block_neighbours.hpp>
#include <korch/guard_cell_exchange.hpp>
#include <korch/guard_cell_iterator.hpp>

struct korch_neighbours {
  korch::NeighbourList list;
};
struct korch_exchange {
  korch_blocks* blocks;
  std::unique_ptr<korch::GuardCellExchange> exchange;
  std::unique_ptr<korch::GuardCellIterator> order;
};

namespace {

using korch::c_api::guarded;
using korch::c_api::library;
using korch::c_api::require;

// The communicator korch uses: the code's own, or MPI_COMM_WORLD.
korch::Communicator communicator() {
  auto& l = library();
  return l.communicator ? *l.communicator : korch::Communicator::world();
}

korch_exchange& exchange_of(korch_exchange* e) {
  return require(e, "exchange", "create it with korch_exchange_create");
}

}  // namespace

extern "C" {

int korch_start_mpi(void) {
  return guarded("korch_start_mpi", [&] {
    auto& l = library();
    std::lock_guard<std::mutex> lock(l.mutex);
    if (!l.mpi) l.mpi = std::make_unique<korch::MpiSession>(nullptr, nullptr);
  });
}

int korch_use_communicator(int32_t fortran_handle) {
  return guarded("korch_use_communicator", [&] {
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
    *out = new korch_neighbours{korch::NeighbourList(dims)};
  });
}

int korch_neighbours_set(korch_neighbours* neighbours, int32_t block, const int32_t direction[3], int32_t kind,
                         int32_t global_id, int32_t rank) {
  return guarded("korch_neighbours_set", [&] {
    auto& list = require(neighbours, "neighbours", "create them with korch_neighbours_create").list;
    require(direction, "direction", "pass three components, each -1, 0 or +1");
    korch::Neighbour n;
    switch (kind) {
      case KORCH_NEIGHBOUR_BLOCK: n = korch::Neighbour::block(global_id, rank); break;
      case KORCH_NEIGHBOUR_OUTFLOW: n = korch::Neighbour::outflow(); break;
      case KORCH_NEIGHBOUR_NONE: n = korch::Neighbour::none(); break;
      default:
        throw korch::Error::format("kind is {}: use KORCH_NEIGHBOUR_BLOCK ({}), KORCH_NEIGHBOUR_OUTFLOW ({}) or "
                                   "KORCH_NEIGHBOUR_NONE ({})",
                                   kind, static_cast<int>(KORCH_NEIGHBOUR_BLOCK), static_cast<int>(KORCH_NEIGHBOUR_OUTFLOW),
                                   static_cast<int>(KORCH_NEIGHBOUR_NONE));
    }
    list.set(block, {direction[0], direction[1], direction[2]}, n);
  });
}

int korch_neighbours_destroy(korch_neighbours* neighbours) {
  return guarded("korch_neighbours_destroy", [&] { delete neighbours; });
}

int korch_exchange_create(korch_blocks* blocks, const korch_neighbours* neighbours, const int32_t width[3],
                          korch_exchange** out) {
  return guarded("korch_exchange_create", [&] {
    require(out, "out", "pass the address of a korch_exchange pointer");
    *out = nullptr;
    auto& b = require(blocks, "blocks", "create them with korch_blocks_create");
    const auto& n = require(neighbours, "neighbours", "create them with korch_neighbours_create").list;
    std::array<int, 3> w{-1, -1, -1};
    if (width) w = {width[0], width[1], width[2]};
    auto e = std::make_unique<korch_exchange>();
    e->blocks = &b;
    e->exchange = std::make_unique<korch::GuardCellExchange>(b.list, n, communicator(), w);
    e->order = std::make_unique<korch::GuardCellIterator>(*e->exchange, 0, 1);
    *out = e.release();
  });
}

int korch_exchange_fill(korch_exchange* exchange, int32_t first_var, int32_t n_vars) {
  return guarded("korch_exchange_fill", [&] { exchange_of(exchange).exchange->fill(first_var, n_vars); });
}

int korch_exchange_start(korch_exchange* exchange, int32_t first_var, int32_t n_vars) {
  return guarded("korch_exchange_start", [&] {
    auto& e = exchange_of(exchange);
    e.order->set_variables(first_var, n_vars);
    e.order->begin(e.blocks->list);
  });
}

int korch_exchange_next(korch_exchange* exchange, int32_t* block) {
  return guarded("korch_exchange_next", [&] {
    auto& e = exchange_of(exchange);
    require(block, "block", "pass the address of an int32_t");
    if (!e.exchange->in_progress())
      throw korch::Error("the exchange has no fill in progress: call korch_exchange_start first");
    *block = -1;
    try {
      if (const auto b = e.order->next()) *block = *b;
    } catch (...) {
      e.order->abandon();
      throw;
    }
  });
}

int korch_exchange_destroy(korch_exchange* exchange) {
  return guarded("korch_exchange_destroy", [&] { delete exchange; });
}

int korch_execute_filled(const korch_bundle* bundle, const korch_configuration* configuration, korch_exchange* exchange,
                         int32_t first_var, int32_t n_vars) {
  return guarded("korch_execute_filled", [&] {
    const auto& b = require(bundle, "bundle", "create it with korch_bundle_create").bundle;
    const auto& c = require(configuration, "configuration", "create it with korch_configuration_builtin or _json").configuration;
    auto& e = exchange_of(exchange);
    e.order->set_variables(first_var, n_vars);
    korch::c_api::runtime().execute(b, c, e.blocks->list, e.order.get());
  });
}

}  // extern "C"
