// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "conduction.hpp"

#include <korch/backend/spaces.hpp>
#include <korch/config.hpp>
#include <korch/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#if KORCH_HAVE_KOKKOSKERNELS
#include <KokkosBlas1_axpby.hpp>
#include <KokkosBlas1_dot.hpp>
#include <KokkosBlas1_nrm2.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#endif

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

#if KORCH_HAVE_KOKKOSKERNELS

using Device = Kokkos::Device<DeviceExecSpace, DeviceMemSpace>;
using Matrix = KokkosSparse::CrsMatrix<double, int, Device, void, std::size_t>;
using Vector = Kokkos::View<double*, Kokkos::LayoutLeft, Device>;
using HostVector = Kokkos::View<double*, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

struct Key {
  std::array<int, 3> n{};
  std::array<double, 3> dx{};
  double kappa_dt = 0;
  bool periodic = false;
  bool operator==(const Key& o) const {
    return n == o.n && dx == o.dx && kappa_dt == o.kappa_dt && periodic == o.periodic;
  }
};

// The last matrix and work vectors, released by a Kokkos finalize hook so that no View outlives Kokkos.
struct Cache {
  bool valid = false;
  Key key;
  Matrix matrix;
  Vector b, x, r, p, ap;
};

Cache& cache_storage() {
  static Cache instance;
  return instance;
}

// The cache, with a finalize hook registered once per Kokkos session (initialize ... finalize).
Cache& cache() {
  static bool hooked = false;
  if (!hooked) {
    Kokkos::push_finalize_hook([] {
      cache_storage() = Cache{};
      hooked = false;
    });
    hooked = true;
  }
  return cache_storage();
}

Matrix build_matrix(const Key& key) {
  const auto& n = key.n;
  const int cells = n[0] * n[1] * n[2];
  std::array<double, 3> coupling{};
  for (int d = 0; d < 3; ++d) coupling[d] = key.kappa_dt / (key.dx[d] * key.dx[d]);

  using RowMap = Kokkos::View<std::size_t*, Device>;
  using Entries = Kokkos::View<int*, Device>;
  using Values = Kokkos::View<double*, Device>;
  RowMap row_map("conduction.row_map", static_cast<std::size_t>(cells) + 1);
  auto row_map_h = Kokkos::create_mirror_view(row_map);
  std::vector<int> entries;
  std::vector<double> values;
  entries.reserve(static_cast<std::size_t>(cells) * 7);
  values.reserve(static_cast<std::size_t>(cells) * 7);

  std::array<std::pair<int, double>, 7> row{};
  row_map_h(0) = 0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const std::array<int, 3> at{i, j, k};
        const int c = i + n[0] * (j + n[1] * k);
        int count = 0;
        double diagonal = 1.0;
        auto add = [&](int column, double value) {
          for (int e = 0; e < count; ++e)
            if (row[static_cast<std::size_t>(e)].first == column) {
              row[static_cast<std::size_t>(e)].second += value;
              return;
            }
          row[static_cast<std::size_t>(count++)] = {column, value};
        };
        const std::array<int, 3> stride{1, n[0], n[0] * n[1]};
        for (int d = 0; d < 3; ++d) {
          if (n[d] == 1) continue;
          for (int side : {-1, 1}) {
            int q = at[static_cast<std::size_t>(d)] + side;
            if (q < 0 || q >= n[d]) {
              if (!key.periodic) continue;  // zero flux through the boundary face
              q = (q + n[d]) % n[d];
            }
            const int neighbour = c + (q - at[static_cast<std::size_t>(d)]) * stride[static_cast<std::size_t>(d)];
            diagonal += coupling[static_cast<std::size_t>(d)];
            add(neighbour, -coupling[static_cast<std::size_t>(d)]);
          }
        }
        add(c, diagonal);
        for (int e = 1; e < count; ++e)  // insertion sort by column (at most 7 entries)
          for (int f = e; f > 0 && row[static_cast<std::size_t>(f - 1)].first > row[static_cast<std::size_t>(f)].first;
               --f)
            std::swap(row[static_cast<std::size_t>(f - 1)], row[static_cast<std::size_t>(f)]);
        for (int e = 0; e < count; ++e) {
          entries.push_back(row[static_cast<std::size_t>(e)].first);
          values.push_back(row[static_cast<std::size_t>(e)].second);
        }
        row_map_h(static_cast<std::size_t>(c) + 1) = entries.size();
      }
  Kokkos::deep_copy(row_map, row_map_h);
  Entries entries_d("conduction.entries", entries.size());
  Values values_d("conduction.values", values.size());
  Kokkos::deep_copy(entries_d,
                    Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(entries.data(), entries.size()));
  Kokkos::deep_copy(values_d,
                    Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(values.data(), values.size()));
  return Matrix("conduction.matrix", cells, cells, values.size(), values_d, row_map, entries_d);
}

// The matrix and vectors for `key` and `cells`, built when the key or the size changed.
Cache& cache_for(const Key& key, std::size_t cells) {
  Cache& c = cache();
  if (c.valid && c.key == key) return c;
  c.valid = false;
  c.matrix = build_matrix(key);
  if (c.b.extent(0) != cells) {
    c.b = Vector("conduction.b", cells);
    c.x = Vector("conduction.x", cells);
    c.r = Vector("conduction.r", cells);
    c.p = Vector("conduction.p", cells);
    c.ap = Vector("conduction.ap", cells);
  }
  c.key = key;
  c.valid = true;
  return c;
}

#endif  // KORCH_HAVE_KOKKOSKERNELS

}  // namespace

ConductionResult conduct(std::vector<double>& temperature, std::array<int, 3> n, std::array<double, 3> dx, double kappa,
                         double dt, bool periodic, double tol, int max_iter) {
  check_arguments(temperature, n, dx, kappa, dt, tol, max_iter);
  if (kappa == 0) return {};
#if !KORCH_HAVE_KOKKOSKERNELS
  (void)periodic;
  throw Error(
      "conduct: korch was built without Kokkos Kernels (KORCH_HAVE_KOKKOSKERNELS is 0): implicit conduction "
      "needs it; rebuild korch with Kokkos Kernels found");
#else
  const std::size_t cells = temperature.size();
  const Cache& c = cache_for(Key{n, dx, kappa * dt, periodic}, cells);
  const Matrix& a = c.matrix;
  const Vector &b = c.b, &x = c.x, &r = c.r, &p = c.p, &ap = c.ap;

  Kokkos::deep_copy(b, HostVector(temperature.data(), cells));
  const double b_norm = KokkosBlas::nrm2(b);
  if (b_norm == 0) return {};  // T = 0 stays 0

  // r = b - A x, starting from x = b (the old temperature): sum(r) = 0, so sum(x) is kept.
  auto true_residual = [&] {
    Kokkos::deep_copy(r, b);
    KokkosSparse::spmv("N", -1.0, a, x, 1.0, r);
    return KokkosBlas::nrm2(r);
  };
  Kokkos::deep_copy(x, b);
  double r_norm = true_residual();
  Kokkos::deep_copy(p, r);
  double rr = r_norm * r_norm;
  const double target = tol * b_norm;
  int iterations = 0;
  bool converged = false;
  for (;;) {
    if (std::sqrt(rr) <= target) {
      // The recursive residual says so: confirm with the true one, restart from it if not.
      r_norm = true_residual();
      if (r_norm <= target) {
        converged = true;
        break;
      }
      Kokkos::deep_copy(p, r);
      rr = r_norm * r_norm;
    }
    if (iterations >= max_iter) break;
    KokkosSparse::spmv("N", 1.0, a, p, 0.0, ap);
    const double p_ap = KokkosBlas::dot(p, ap);
    if (!(p_ap > 0) || !std::isfinite(p_ap)) break;  // breakdown (round-off only: A is SPD)
    const double alpha = rr / p_ap;
    KokkosBlas::axpby(alpha, p, 1.0, x);    // x += alpha p
    KokkosBlas::axpby(-alpha, ap, 1.0, r);  // r -= alpha A p
    const double rr_new = KokkosBlas::dot(r, r);
    const double beta = rr_new / rr;
    KokkosBlas::axpby(1.0, r, beta, p);  // p = r + beta p
    rr = rr_new;
    ++iterations;
  }
  if (!converged) {
    r_norm = true_residual();
    if (r_norm > target)
      throw Error::format(
          "conduct: CG did not reach the relative tolerance {:g} in {} iterations (max_iter {}): "
          "relative residual {:g}; raise max_iter or tol, or take a smaller dt",
          tol, iterations, max_iter, r_norm / b_norm);
  }
  Kokkos::deep_copy(HostVector(temperature.data(), cells), x);
  return {iterations, r_norm / b_norm};
#endif
}

}  // namespace korch::hydro
