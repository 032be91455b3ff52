// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sod's shock tube along x, y and z of a 3-D grid against the exact Riemann solution
// (docs/hydro-verification.md, "Sod along every axis").
#include "test_hydro_tube_support.hpp"
#include "test_sanitized.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

using namespace korch::hydro;
using korch::hydro::testing::HydroTube;

namespace {

struct SodFigures {
  double l1 = 0.0;  // mean |rho - exact rho| along the tube
  int steps = 0;
};

SodFigures sod(int axis, int cells) {
  const auto start = std::chrono::steady_clock::now();
  HydroTube tube(axis, cells, cells / 64, 3, korch::BoundaryKind::outflow);
  const Primitive1D left{1.0, 0.0, 1.0}, right{0.125, 0.0, 0.1};
  tube.set([&](double x) { return x < 0.5 ? left : right; });
  tube.run_to(0.2);
  const auto rho = tube.density();
  double err = 0.0;
  for (std::size_t i = 0; i < rho.size(); ++i) {
    const double x = (static_cast<double>(i) + 0.5) * tube.dx();
    err += std::fabs(rho[i] - exact_riemann(left, right, 1.4, (x - 0.5) / tube.time()).rho);
  }
  SodFigures out{err / static_cast<double>(rho.size()), tube.steps()};
  MESSAGE("sod along axis " << axis << ", " << cells << " cells: L1(rho) " << out.l1 << ", " << out.steps << " cycles, "
                            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s");
  return out;
}

}  // namespace

// Physics at two resolutions: skipped in sanitizer builds, where the 3-D tube of test_hydro_solver.cpp
// runs the same paths.
TEST_CASE("Sod along x, y and z: L1(rho) <= 0.011 at 128 cells, at most 0.6 of it at 256, equal cycle counts" *
          doctest::skip(korch::test::kSanitized)) {
  SodFigures coarse[3], fine[3];
  for (int axis = 0; axis < 3; ++axis) {
    coarse[axis] = sod(axis, 128);
    fine[axis] = sod(axis, 256);
    INFO("axis " << axis);
    CHECK(coarse[axis].l1 <= 0.011);
    CHECK(fine[axis].l1 <= 0.6 * coarse[axis].l1);
  }
  for (int axis = 1; axis < 3; ++axis) {
    INFO("axis " << axis);
    CHECK(coarse[axis].steps == coarse[0].steps);
    CHECK(fine[axis].steps == fine[0].steps);
    // The same arithmetic along every axis: the same errors to round-off.
    CHECK(coarse[axis].l1 == doctest::Approx(coarse[0].l1).epsilon(1e-12));
  }
}
