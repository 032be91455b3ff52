// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "exact_riemann.hpp"

#include <korch/error.hpp>

#include <algorithm>
#include <cmath>

namespace korch::hydro {

namespace {

// Pressure function f_K(p) and its derivative (Toro 4.6, 4.7).
void pressure_function(double p, const Primitive1D& k, double gamma, double& f, double& df) {
  const double c = std::sqrt(gamma * k.p / k.rho);
  if (p > k.p) {
    const double A = 2.0 / ((gamma + 1.0) * k.rho), B = (gamma - 1.0) / (gamma + 1.0) * k.p;
    const double q = std::sqrt(A / (p + B));
    f = (p - k.p) * q;
    df = q * (1.0 - 0.5 * (p - k.p) / (B + p));
  } else {
    const double r = p / k.p;
    f = 2.0 * c / (gamma - 1.0) * (std::pow(r, (gamma - 1.0) / (2.0 * gamma)) - 1.0);
    df = 1.0 / (k.rho * c) * std::pow(r, -(gamma + 1.0) / (2.0 * gamma));
  }
}

}  // namespace

Primitive1D exact_riemann(const Primitive1D& L, const Primitive1D& R, double gamma, double s) {
  if (!(L.rho > 0 && R.rho > 0 && L.p > 0 && R.p > 0 && gamma > 1.0)) {
    throw Error::format(
        "exact_riemann: states must have positive density and pressure and gamma > 1 "
        "(left rho {} p {}, right rho {} p {}, gamma {})",
        L.rho, L.p, R.rho, R.p, gamma);
  }
  const double cL = std::sqrt(gamma * L.p / L.rho), cR = std::sqrt(gamma * R.p / R.rho);
  const double du = R.u - L.u;
  if (2.0 * (cL + cR) / (gamma - 1.0) <= du) throw Error("exact_riemann: the states generate a vacuum");
  // Newton iteration for the star pressure from the two-rarefaction guess.
  const double z = (gamma - 1.0) / (2.0 * gamma);
  double p = std::pow((cL + cR - 0.5 * (gamma - 1.0) * du) / (cL / std::pow(L.p, z) + cR / std::pow(R.p, z)), 1.0 / z);
  p = std::max(p, 1e-14);
  for (int it = 0; it < 100; ++it) {
    double fL, dfL, fR, dfR;
    pressure_function(p, L, gamma, fL, dfL);
    pressure_function(p, R, gamma, fR, dfR);
    const double pn = std::max(p - (fL + fR + du) / (dfL + dfR), 1e-14);
    const double change = 2.0 * std::fabs(pn - p) / (pn + p);
    p = pn;
    if (change < 1e-15) break;
  }
  double fL, dfL, fR, dfR;
  pressure_function(p, L, gamma, fL, dfL);
  pressure_function(p, R, gamma, fR, dfR);
  const double um = 0.5 * (L.u + R.u) + 0.5 * (fR - fL);
  const double g1 = (gamma - 1.0) / (gamma + 1.0);
  if (s <= um) {  // left of the contact
    if (p > L.p) {
      const double SL = L.u - cL * std::sqrt((gamma + 1.0) / (2.0 * gamma) * p / L.p + z);
      if (s <= SL) return L;
      return {L.rho * (p / L.p + g1) / (g1 * p / L.p + 1.0), um, p};
    }
    const double SHL = L.u - cL, cml = cL * std::pow(p / L.p, z), STL = um - cml;
    if (s <= SHL) return L;
    if (s > STL) return {L.rho * std::pow(p / L.p, 1.0 / gamma), um, p};
    const double c = 2.0 / (gamma + 1.0) * (cL + 0.5 * (gamma - 1.0) * (L.u - s));
    const double rho = L.rho * std::pow(c / cL, 2.0 / (gamma - 1.0));
    return {rho, 2.0 / (gamma + 1.0) * (cL + 0.5 * (gamma - 1.0) * L.u + s), L.p * std::pow(c / cL, 1.0 / z)};
  }
  if (p > R.p) {
    const double SR = R.u + cR * std::sqrt((gamma + 1.0) / (2.0 * gamma) * p / R.p + z);
    if (s >= SR) return R;
    return {R.rho * (p / R.p + g1) / (g1 * p / R.p + 1.0), um, p};
  }
  const double SHR = R.u + cR, cmr = cR * std::pow(p / R.p, z), STR = um + cmr;
  if (s >= SHR) return R;
  if (s < STR) return {R.rho * std::pow(p / R.p, 1.0 / gamma), um, p};
  const double c = 2.0 / (gamma + 1.0) * (cR - 0.5 * (gamma - 1.0) * (R.u - s));
  const double rho = R.rho * std::pow(c / cR, 2.0 / (gamma - 1.0));
  return {rho, 2.0 / (gamma + 1.0) * (-cR + 0.5 * (gamma - 1.0) * R.u + s), R.p * std::pow(c / cR, 1.0 / z)};
}

}  // namespace korch::hydro
