// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Sedov-Taylor similarity solution by integration of its ordinary differential equations
// (docs/hydro-verification.md, "Sedov-Taylor", has their derivation).
#include "sedov_exact.hpp"

#include "euler_constants.hpp"

#include <korch/error.hpp>

#include <cmath>

namespace korch::hydro {

namespace {

// Profiles below this lambda are taken as the table's last entry: the density there is below
// 1e-20 of the shock's and the pressure flat.
constexpr double lambda_min = 1e-4;
constexpr int table_steps = 20000;  // RK4 steps in ln(lambda) from 1 to lambda_min (even: Simpson)

// f, g, p and the energy integral e (see the constructor) as one vector for the integrator.
struct Similarity {
  double f, g, p, e;
};

Similarity plus(const Similarity& y, const Similarity& k, double w) {
  return {y.f + w * k.f, y.g + w * k.g, y.p + w * k.p, y.e + w * k.e};
}

// The similarity equations (continuity, momentum, entropy) solved for the derivatives of f, g, p
// with respect to s = ln(lambda), and the integrand of the energy in s.
Similarity slope(double s, const Similarity& y, double gamma, int dim) {
  const double lambda = std::exp(s);
  const double nu = dim;
  const double f = y.f, g = y.g, p = y.p;
  const double d = f - lambda;  // velocity relative to the similarity coordinate
  const double df = (nu * p - gamma * (nu - 1.0) * p * f / lambda - 0.5 * nu * g * f * d) / (gamma * p - g * d * d);
  const double dp = g * (0.5 * nu * f - d * df);
  const double dg = -g * (df + (nu - 1.0) * f / lambda) / d;
  const double energy = (0.5 * g * f * f + p / (gamma - 1.0)) * std::pow(lambda, dim);
  return {lambda * df, lambda * dg, lambda * dp, energy};
}

}  // namespace

SedovSolution::SedovSolution(double gamma, int dim) : gamma_(gamma), dim_(dim) {
  if (!(gamma > 1.0) || !std::isfinite(gamma))
    throw Error::format("SedovSolution: gamma {} is not an ideal gas's: give a finite gamma > 1", gamma);
  if (dim != 2 && dim != 3)
    throw Error::format("SedovSolution: dim {} has no blast here: give 2 (cylinder) or 3 (sphere)", dim);
  // Strong-shock (Rankine-Hugoniot) values just behind the shock, lambda = 1; RK4 inwards in
  // s = ln(lambda). e accumulates the energy inside the shock in similarity form:
  // E = alpha rho0 R^(dim+2) / t^2, alpha = area(dim) (2 / (dim + 2))^2 integral_0^1 (g f^2 / 2 +
  // p / (gamma - 1)) lambda^(dim-1) dlambda.
  Similarity y{2.0 / (gamma + 1.0), (gamma + 1.0) / (gamma - 1.0), 2.0 / (gamma + 1.0), 0.0};
  const double h = std::log(lambda_min) / table_steps;  // negative: inwards
  table_.reserve(table_steps + 1);
  table_.push_back({1.0, y.f, y.g, y.p});
  for (int n = 0; n < table_steps; ++n) {
    const double s = n * h;
    const Similarity k1 = slope(s, y, gamma, dim);
    const Similarity k2 = slope(s + 0.5 * h, plus(y, k1, 0.5 * h), gamma, dim);
    const Similarity k3 = slope(s + 0.5 * h, plus(y, k2, 0.5 * h), gamma, dim);
    const Similarity k4 = slope(s + h, plus(y, k3, h), gamma, dim);
    y.f += h / 6.0 * (k1.f + 2.0 * k2.f + 2.0 * k3.f + k4.f);
    y.g += h / 6.0 * (k1.g + 2.0 * k2.g + 2.0 * k3.g + k4.g);
    y.p += h / 6.0 * (k1.p + 2.0 * k2.p + 2.0 * k3.p + k4.p);
    y.e += h / 6.0 * (k1.e + 2.0 * k2.e + 2.0 * k3.e + k4.e);
    table_.push_back({std::exp((n + 1) * h), y.f, y.g, y.p});
  }
  const double integral = -y.e;  // integrated from lambda = 1 down
  const double area = dim == 2 ? 2.0 * pi : 4.0 * pi;
  const double a = 2.0 / (dim + 2.0);
  alpha_ = area * a * a * integral;
}

double SedovSolution::shock_radius(double energy, double rho0, double t) const {
  if (!(energy > 0.0 && rho0 > 0.0 && t > 0.0) || !std::isfinite(energy * rho0 * t))
    throw Error::format("SedovSolution: energy {}, density {}, time {}: give positive finite values", energy, rho0, t);
  return std::pow(energy * t * t / (alpha_ * rho0), 1.0 / (dim_ + 2.0));
}

SedovSolution::Profile SedovSolution::profile(double lambda) const {
  if (lambda <= lambda_min) return table_.back();
  // The table is uniform in ln(lambda): find the interval and interpolate linearly in it.
  const double x = std::log(lambda) / std::log(lambda_min) * table_steps;
  const auto n = static_cast<std::size_t>(x);
  if (n + 1 >= table_.size()) return table_.back();
  const double w = x - static_cast<double>(n);
  const Profile& a = table_[n];
  const Profile& b = table_[n + 1];
  return {lambda, a.f + w * (b.f - a.f), a.g + w * (b.g - a.g), a.p + w * (b.p - a.p)};
}

double SedovSolution::moved_mass_moment(int k) const {
  if (k < 0) throw Error::format("SedovSolution::moved_mass_moment: moment {}: give k >= 0", k);
  // Simpson's rule in s = ln(lambda) over the table (an even number of steps); integrand
  // (g - 1) lambda^(dim + k).
  const double h = std::log(lambda_min) / table_steps;
  double sum = 0.0;
  auto integrand = [&](std::size_t n) { return (table_[n].g - 1.0) * std::pow(table_[n].lambda, dim_ + k); };
  for (std::size_t n = 0; n + 2 < table_.size(); n += 2)
    sum += (integrand(n) + 4.0 * integrand(n + 1) + integrand(n + 2)) * (-h) / 3.0;
  // Below lambda_min: g is 0 there, the integrand -lambda^(dim + k) in s.
  return sum - std::pow(lambda_min, dim_ + k) / (dim_ + k);
}

RadialState SedovSolution::at(double r, double energy, double rho0, double t) const {
  const double R = shock_radius(energy, rho0, t);
  if (!(r >= 0.0)) throw Error::format("SedovSolution::at: radius {}: give a radius >= 0", r);
  if (r > R) return {rho0, 0.0, 0.0};
  const double speed = 2.0 / (dim_ + 2.0) * R / t;  // dR/dt
  const Profile q = profile(r / R);
  return {rho0 * q.g, speed * q.f, rho0 * speed * speed * q.p};
}

}  // namespace korch::hydro
