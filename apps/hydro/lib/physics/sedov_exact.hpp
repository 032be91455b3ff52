// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The exact solution of the Sedov-Taylor point blast in a uniform cold gas (ideal gas, no
// counter-pressure), cylindrical (dim 2) and spherical (dim 3): the reference of the Sedov
// verification tests. Equations and method: docs/hydro-verification.md, "Sedov-Taylor".
#pragma once

#include <vector>

namespace korch::hydro {

struct RadialState {
  double rho = 0.0;
  double u = 0.0;  // radial velocity
  double p = 0.0;
};

class SedovSolution {
 public:
  // Integrates the similarity equations for `gamma` (> 1) and `dim` (2 or 3); throws korch::Error
  // naming the argument otherwise.
  SedovSolution(double gamma, int dim);

  double gamma() const noexcept { return gamma_; }
  int dim() const noexcept { return dim_; }
  // The constant alpha of E = alpha * rho0 * R^(dim+2) / t^2 (energy E per unit length in 2D).
  double alpha() const noexcept { return alpha_; }
  // The shock radius at time t > 0 of energy E released at t = 0 in gas of density rho0 (all
  // positive and finite, else korch::Error).
  double shock_radius(double energy, double rho0, double t) const;
  // The integral over 0 <= lambda <= 1 of (g - 1) lambda^(dim - 1 + k), g = rho / rho0: the k-th
  // radial moment of the mass the blast moved, in similarity form (0 for k = 0: mass is kept).
  double moved_mass_moment(int k) const;
  // The state at radius r >= 0 and time t > 0 (the undisturbed gas, pressure 0, beyond the shock).
  RadialState at(double r, double energy, double rho0, double t) const;

 private:
  // The similarity profiles at lambda = r / R, from lambda = 1 (the shock) inwards.
  struct Profile {
    double lambda, f, g, p;  // u = R' f, rho = rho0 g, p = rho0 R'^2 p
  };
  Profile profile(double lambda) const;

  double gamma_;
  int dim_;
  double alpha_ = 0.0;
  std::vector<Profile> table_;  // lambda descending from 1
};

}  // namespace korch::hydro
