// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "conduction.hpp"

#include "conduction_operator.hpp"

#include <korch/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>

#include <Kokkos_Core.hpp>

namespace korch::hydro {

namespace {

void check_arguments(const std::vector<double>& temperature, const std::array<int, 3>& n,
                     const std::array<double, 3>& dx, double kappa, double dt, double tol, int max_iter) {
  for (int d = 0; d < 3; ++d) {
    if (n[d] < 1)
      throw Error::format(
          "conduct: the grid has {} x {} x {} cells: every n[d] must be at least 1 (use 1 for an "
          "unused dimension)",
          n[0], n[1], n[2]);
    if (!(dx[d] > 0) || !std::isfinite(dx[d]))
      throw Error::format("conduct: dx[{}] = {} must be positive and finite", d, dx[d]);
  }
  const std::size_t cells =
      static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) * static_cast<std::size_t>(n[2]);
  if (cells >= static_cast<std::size_t>(1) << 31)
    throw Error::format("conduct: {} cells exceed the int ordinals of the matrix", cells);
  if (temperature.size() != cells)
    throw Error::format("conduct: {} temperatures for a {} x {} x {} grid: pass exactly {} values (x fastest)",
                        temperature.size(), n[0], n[1], n[2], cells);
  if (!(kappa >= 0) || !std::isfinite(kappa)) throw Error::format("conduct: kappa = {} must be finite and >= 0", kappa);
  if (!(dt > 0) || !std::isfinite(dt)) throw Error::format("conduct: dt = {} must be finite and > 0", dt);
  if (!(tol > 0)) throw Error::format("conduct: tol = {} must be > 0", tol);
  if (max_iter < 1) throw Error::format("conduct: max_iter = {} must be at least 1", max_iter);
  for (std::size_t c = 0; c < cells; ++c)
    if (!std::isfinite(temperature[c]))
      throw Error::format("conduct: temperature[{}] = {} is not finite", c, temperature[c]);
}

// The uniform grid's system: unit weights, couplings 1 / dx_d^2 (the cell volume is the reference).
ConductionSystem uniform_system(const std::array<int, 3>& n, const std::array<double, 3>& dx, bool periodic) {
  ConductionSystem system;
  const std::array<int, 3> stride{1, n[0], n[0] * n[1]};
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const std::array<int, 3> at{i, j, k};
        const int c = i + n[0] * (j + n[1] * k);
        for (std::size_t d = 0; d < 3; ++d) {
          if (n[d] == 1) continue;
          for (int side : {-1, 1}) {
            int q = at[d] + side;
            if (q < 0 || q >= n[d]) {
              if (!periodic) continue;  // zero flux through the boundary face
              q = (q + n[d]) % n[d];
            }
            system.couple(c + (q - at[d]) * stride[d], 1.0 / (dx[d] * dx[d]));
          }
        }
        system.end_row(1.0);
      }
  return system;
}

struct Key {
  std::array<int, 3> n{};
  std::array<double, 3> dx{};
  bool periodic = false;
  bool operator==(const Key& o) const { return n == o.n && dx == o.dx && periodic == o.periodic; }
};

// The last grid's operator, released by a Kokkos finalize hook so that no View outlives Kokkos.
struct Cache {
  Key key;
  std::unique_ptr<ConductionOperator> matrix;
};

Cache& cache_storage() {
  static Cache instance;
  return instance;
}

// The operator for `key`, built when the grid changed; a finalize hook is registered once per
// Kokkos session (initialize ... finalize).
const ConductionOperator& operator_for(const Key& key) {
  static bool hooked = false;
  if (!hooked) {
    Kokkos::push_finalize_hook([] {
      cache_storage() = Cache{};
      hooked = false;
    });
    hooked = true;
  }
  Cache& c = cache_storage();
  if (!c.matrix || !(c.key == key)) {
    c.matrix.reset();
    c.matrix = std::make_unique<ConductionOperator>(uniform_system(key.n, key.dx, key.periodic));
    c.key = key;
  }
  return *c.matrix;
}

}  // namespace

ConductionResult conduct(std::vector<double>& temperature, std::array<int, 3> n, std::array<double, 3> dx, double kappa,
                         double dt, bool periodic, double tol, int max_iter) {
  check_arguments(temperature, n, dx, kappa, dt, tol, max_iter);
  if (kappa == 0) return {};
  return operator_for(Key{n, dx, periodic}).solve(temperature, kappa * dt, tol, max_iter, "conduct");
}

}  // namespace korch::hydro
