// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Implicit thermal conduction of the hydro app: backward Euler + CG from Kokkos Kernels,
// against the analytic spreading of a Gaussian, conservation, the CG tolerance and the errors.
#include <doctest/doctest.h>

#include <korch/config.hpp>
#include <korch/error.hpp>

#include "conduction.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace korch::hydro;

#if KORCH_HAVE_KOKKOSKERNELS

namespace {

// A Gaussian pulse exp(-r^2 / (2 sigma^2)) centred in the unit box [-1/2, 1/2]^dims (cells at their
// centres); the dimensions with n[d] == 1 (or past `dims`) are flat.
std::vector<double> gaussian(const std::array<int, 3>& n, int dims, double variance) {
  std::vector<double> t(static_cast<std::size_t>(n[0]) * n[1] * n[2]);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const std::array<int, 3> at{i, j, k};
        double value = 1.0;
        for (int d = 0; d < dims; ++d) {
          const double x = (at[static_cast<std::size_t>(d)] + 0.5) / n[static_cast<std::size_t>(d)] - 0.5;
          value *= std::exp(-x * x / (2 * variance));
        }
        t[static_cast<std::size_t>(i + n[0] * (j + n[1] * k))] = value;
      }
  return t;
}

// Max |numerical - analytic| after `steps` backward-Euler steps to time t_end, relative to the
// initial peak (1). The analytic solution: variance sigma^2 + 2 kappa t per dimension, amplitude
// (sigma^2 / (sigma^2 + 2 kappa t))^(1/2) per dimension.
double gaussian_error(std::array<int, 3> n, int dims, int steps, bool periodic) {
  const double sigma2 = 0.07 * 0.07, kappa = 0.5;
  const double t_end = sigma2 / (2 * kappa);  // the variance doubles
  const double dt = t_end / steps;
  std::array<double, 3> dx{1.0, 1.0, 1.0};
  for (int d = 0; d < dims; ++d) dx[static_cast<std::size_t>(d)] = 1.0 / n[static_cast<std::size_t>(d)];
  std::vector<double> t = gaussian(n, dims, sigma2);
  for (int s = 0; s < steps; ++s) {
    const ConductionResult result = conduct(t, n, dx, kappa, dt, periodic, 1e-12, 2000);
    CHECK(result.residual <= 1e-12);
  }
  const double variance = sigma2 + 2 * kappa * t_end;
  const double amplitude = std::pow(sigma2 / variance, 0.5 * dims);
  const std::vector<double> exact = gaussian(n, dims, variance);
  double error = 0;
  for (std::size_t c = 0; c < t.size(); ++c) error = std::max(error, std::abs(t[c] - amplitude * exact[c]));
  return error;
}

// ||b - A x|| / ||b|| computed here with the stencil, independently of the library's matrix.
double relative_residual(const std::vector<double>& x, const std::vector<double>& b, std::array<int, 3> n,
                         std::array<double, 3> dx, double kappa_dt, bool periodic) {
  double rr = 0, bb = 0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const std::array<int, 3> at{i, j, k};
        const std::array<int, 3> stride{1, n[0], n[0] * n[1]};
        const int c = i + n[0] * (j + n[1] * k);
        double ax = x[static_cast<std::size_t>(c)];
        for (std::size_t d = 0; d < 3; ++d) {
          if (n[d] == 1) continue;
          const double coupling = kappa_dt / (dx[d] * dx[d]);
          for (int side : {-1, 1}) {
            int q = at[d] + side;
            if (q < 0 || q >= n[d]) {
              if (!periodic) continue;
              q = (q + n[d]) % n[d];
            }
            const int nb = c + (q - at[d]) * stride[d];
            ax += coupling * (x[static_cast<std::size_t>(c)] - x[static_cast<std::size_t>(nb)]);
          }
        }
        const double r = b[static_cast<std::size_t>(c)] - ax;
        rr += r * r;
        bb += b[static_cast<std::size_t>(c)] * b[static_cast<std::size_t>(c)];
      }
  return std::sqrt(rr / bb);
}

std::vector<double> random_field(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> t(size);
  for (double& v : t) v = u(rng);
  return t;
}

}  // namespace

TEST_CASE("conduct: a Gaussian pulse spreads as the analytic solution (variance + 2 kappa t), 1D-like") {
  // 128 cells (sigma = 9 cells), 32 steps: max error below 3e-3 of the peak (measured 2.3e-3, the
  // first-order time error dominating), both boundaries; halving dt nearly halves it.
  for (bool periodic : {true, false}) {
    const double e = gaussian_error({128, 1, 1}, 1, 32, periodic);
    INFO("periodic " << periodic << " error " << e);
    CHECK(e < 3e-3);
  }
  const double e32 = gaussian_error({128, 1, 1}, 1, 32, true), e64 = gaussian_error({128, 1, 1}, 1, 64, true);
  INFO("errors " << e32 << " " << e64);
  CHECK(e32 / e64 > 1.6);
  // Flat in y: a 64 x 3 grid with the pulse along x matches the 1D solution on 64 cells.
  const double e2 = gaussian_error({64, 3, 1}, 1, 16, false);
  const double e1 = gaussian_error({64, 1, 1}, 1, 16, false);
  CHECK(e2 == doctest::Approx(e1).epsilon(1e-6));
  CHECK(e2 < 6e-3);
}

TEST_CASE("conduct: a Gaussian pulse spreads as the analytic solution, 2D, second order with dt ~ dx^2") {
  const double coarse = gaussian_error({32, 32, 1}, 2, 8, true);
  const double fine = gaussian_error({64, 64, 1}, 2, 32, true);
  INFO("errors " << coarse << " " << fine);
  CHECK(coarse < 2.5e-2);      // measured 2.0e-2
  CHECK(fine < 6.5e-3);        // measured 5.3e-3
  CHECK(coarse / fine > 3.0);  // 4 for second order in dx and first in dt with dt ~ dx^2
}

TEST_CASE("conduct: a Gaussian pulse spreads as the analytic solution, 3D") {
  for (bool periodic : {true, false}) {
    const double e = gaussian_error({40, 40, 40}, 3, 20, periodic);
    INFO("periodic " << periodic << " error " << e);
    CHECK(e < 1.5e-2);  // 40^3 cells (sigma = 2.8 cells), 20 steps
  }
}

TEST_CASE("conduct: total heat is conserved to round-off with zero-flux and periodic boundaries") {
  // Odd sizes, a 2-cell periodic dimension (both neighbours the same cell) and a large kappa dt.
  for (const std::array<int, 3>& n : {std::array<int, 3>{7, 5, 4}, std::array<int, 3>{9, 2, 1},
                                      std::array<int, 3>{1, 1, 6}, std::array<int, 3>{1, 1, 1}}) {
    for (bool periodic : {true, false}) {
      std::vector<double> t = random_field(static_cast<std::size_t>(n[0]) * n[1] * n[2], 7);
      double before = 0;
      for (double v : t) before += v;
      for (int step = 0; step < 5; ++step) conduct(t, n, {0.1, 0.2, 0.15}, 3.0, 0.05, periodic, 1e-8);
      double after = 0;
      for (double v : t) after += v;
      INFO("n " << n[0] << " " << n[1] << " " << n[2] << " periodic " << periodic);
      CHECK(std::abs(after - before) <= 1e-13 * before);
    }
  }
}

TEST_CASE("conduct: CG reaches the requested tolerance on the true residual") {
  // Anisotropic cells, and grids with a flat middle dimension or 2 cells along a periodic one.
  const std::array<double, 3> dx{0.1, 0.05, 0.2};
  for (const std::array<int, 3>& n :
       {std::array<int, 3>{24, 20, 6}, std::array<int, 3>{5, 1, 7}, std::array<int, 3>{2, 3, 1}})
    for (bool periodic : {true, false})
      for (double tol : {1e-6, 1e-10, 1e-13}) {
        const std::vector<double> b = random_field(static_cast<std::size_t>(n[0]) * n[1] * n[2], 11);
        std::vector<double> x = b;
        const ConductionResult result = conduct(x, n, dx, 2.0, 0.01, periodic, tol);
        INFO("n " << n[0] << " " << n[1] << " " << n[2] << " periodic " << periodic << " tol " << tol << " iterations "
                  << result.iterations << " residual " << result.residual);
        CHECK(result.iterations > 0);
        CHECK(result.residual <= tol);
        CHECK(relative_residual(x, b, n, dx, 2.0 * 0.01, periodic) <= tol * 1.01 + 1e-15);
      }
  // A cached matrix is reused for the same (n, dx, kappa dt, periodic) and rebuilt when they change.
  std::vector<double> a = random_field(480 * 6, 3), b = a;
  conduct(a, {24, 20, 6}, {0.1, 0.05, 0.2}, 4.0, 0.005, true, 1e-12);
  conduct(b, {24, 20, 6}, {0.1, 0.05, 0.2}, 2.0, 0.01, true, 1e-12);
  for (std::size_t c = 0; c < a.size(); ++c) CHECK(a[c] == doctest::Approx(b[c]).epsilon(1e-10));
}

TEST_CASE("conduct: too small max_iter throws korch::Error naming iterations and residual") {
  const std::array<int, 3> n{32, 32, 1};
  std::vector<double> t = random_field(32 * 32, 5);
  const std::vector<double> before = t;
  try {
    conduct(t, n, {0.01, 0.01, 1.0}, 1.0, 0.01, false, 1e-12, 3);
    FAIL("conduct did not throw");
  } catch (const korch::Error& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find("3 iterations") != std::string::npos);
    CHECK(message.find("residual") != std::string::npos);
  }
  CHECK(t == before);
  // kappa = 0 is the identity; an all-zero field stays zero.
  CHECK(conduct(t, n, {0.01, 0.01, 1.0}, 0.0, 0.01, false).iterations == 0);
  CHECK(t == before);
  std::vector<double> zero(32 * 32, 0.0);
  conduct(zero, n, {0.01, 0.01, 1.0}, 1.0, 0.01, true);
  CHECK(zero == std::vector<double>(32 * 32, 0.0));
}

#else

TEST_CASE("conduct: without Kokkos Kernels it throws korch::Error") {
  std::vector<double> t(8, 1.0);
  CHECK_THROWS_AS(conduct(t, {2, 2, 2}, {1, 1, 1}, 1.0, 0.1, true), korch::Error);
}

#endif

TEST_CASE("conduct: bad arguments are korch::Error") {
  std::vector<double> t(12, 1.0);
  const std::array<double, 3> dx{0.1, 0.1, 0.1};
  CHECK_THROWS_AS(conduct(t, {3, 5, 1}, dx, 1.0, 0.1, true), korch::Error);   // size mismatch
  CHECK_THROWS_AS(conduct(t, {12, 1, 0}, dx, 1.0, 0.1, true), korch::Error);  // zero cells
  std::vector<double> none;
  CHECK_THROWS_AS(conduct(none, {0, 0, 0}, dx, 1.0, 0.1, true), korch::Error);
  CHECK_THROWS_AS(conduct(t, {3, 4, 1}, dx, -1.0, 0.1, true), korch::Error);              // kappa < 0
  CHECK_THROWS_AS(conduct(t, {3, 4, 1}, dx, 1.0, 0.0, true), korch::Error);               // dt = 0
  CHECK_THROWS_AS(conduct(t, {3, 4, 1}, dx, 1.0, -0.1, true), korch::Error);              // dt < 0
  CHECK_THROWS_AS(conduct(t, {3, 4, 1}, {0.1, 0.0, 0.1}, 1.0, 0.1, true), korch::Error);  // dx = 0
  CHECK_THROWS_AS(conduct(t, {3, 4, 1}, dx, 1.0, 0.1, true, 0.0), korch::Error);          // tol = 0
  CHECK_THROWS_AS(conduct(t, {3, 4, 1}, dx, 1.0, 0.1, true, 1e-8, 0), korch::Error);      // max_iter = 0
  t[4] = std::nan("");
  CHECK_THROWS_AS(conduct(t, {3, 4, 1}, dx, 1.0, 0.1, true), korch::Error);  // non-finite temperature
  try {
    std::vector<double> u(10, 1.0);
    conduct(u, {3, 4, 1}, dx, 1.0, 0.1, true);
  } catch (const korch::Error& e) {
    CHECK(std::string(e.what()).find("10 temperatures") != std::string::npos);
  }
}
