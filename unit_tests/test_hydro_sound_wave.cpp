// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A linear sound wave travelling left and right (docs/hydro-verification.md, "Sound wave").
#include "test_hydro_tube_support.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_hydro_sound_wave {

using namespace korch::hydro;
using korch::hydro::testing::HydroTube;

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double amplitude = 1e-6;  // small enough that the wave stays linear to round-off in the error

// L1(rho) after one period of a sound wave of unit wavelength in gas of density 1 and sound speed
// 1, on `cells` cells; direction +1 travels right, -1 left.
double sound_wave_l1(int cells, int direction) {
  const double gamma = 1.4;
  HydroTube tube(0, cells, cells / 16, 2, korch::BoundaryKind::periodic, gamma);
  tube.set([&](double x) {
    const double s = amplitude * std::sin(2.0 * kPi * x);
    // Density, velocity and pressure of one characteristic family: u = +-c drho / rho, dp = c^2 drho.
    return Primitive1D{1.0 + s, direction * s, 1.0 / gamma + s};
  });
  tube.run_to(1.0);  // one period: the exact state is the initial one
  const auto rho = tube.density();
  double err = 0.0;
  for (std::size_t i = 0; i < rho.size(); ++i) {
    const double x = (static_cast<double>(i) + 0.5) * tube.dx();
    err += std::fabs(rho[i] - (1.0 + amplitude * std::sin(2.0 * kPi * x)));
  }
  return err / static_cast<double>(rho.size());
}

}  // namespace

TEST_CASE("sound wave: second order (>= 1.9) and the same error travelling left as right") {
  const auto start = std::chrono::steady_clock::now();
  double right[3], left[3];
  const int cells[3] = {32, 64, 128};
  for (int n = 0; n < 3; ++n) {
    right[n] = sound_wave_l1(cells[n], +1);
    left[n] = sound_wave_l1(cells[n], -1);
    MESSAGE("sound wave, " << cells[n] << " cells: L1(rho) right " << right[n] << ", left " << left[n]
                           << ", relative difference " << std::fabs(left[n] / right[n] - 1.0));
  }
  for (int n = 1; n < 3; ++n) {
    const double order_right = std::log2(right[n - 1] / right[n]), order_left = std::log2(left[n - 1] / left[n]);
    MESSAGE("sound wave order " << cells[n - 1] << " -> " << cells[n] << " cells: right " << order_right << ", left "
                                << order_left);
    CHECK(order_right >= 1.9);
    CHECK(order_left >= 1.9);
  }
  for (int n = 0; n < 3; ++n) CHECK(left[n] == doctest::Approx(right[n]).epsilon(1e-6));
  MESSAGE("sound wave: " << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s");
}

}  // namespace test_hydro_sound_wave
