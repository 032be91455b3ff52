// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "conduction_operator.hpp"

#include <korch/backend/spaces.hpp>
#include <korch/config.hpp>
#include <korch/error.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#if KORCH_HAVE_KOKKOSKERNELS
#include <KokkosBlas1_axpby.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#endif

namespace korch::hydro {

void ConductionSystem::couple(int column, double c) {
  for (auto& entry : row_)
    if (entry.first == column) {
      entry.second += c;
      return;
    }
  row_.emplace_back(column, c);
}

void ConductionSystem::end_row(double weight) {
  const int row = rows();
  double diagonal = 0;
  for (const auto& entry : row_) diagonal += entry.second;
  row_.emplace_back(row, -diagonal);  // negated with the rest below
  std::sort(row_.begin(), row_.end());
  for (const auto& entry : row_) {
    columns_.push_back(entry.first);
    laplacian_.push_back(-entry.second);
  }
  row_start_.push_back(columns_.size());
  weight_.push_back(weight);
  row_.clear();
}

#if KORCH_HAVE_KOKKOSKERNELS

namespace {

using Device = Kokkos::Device<DeviceExecSpace, DeviceMemSpace>;
using Matrix = KokkosSparse::CrsMatrix<double, int, Device, void, std::size_t>;
using Vector = Kokkos::View<double*, Kokkos::LayoutLeft, Device>;
using Values = Matrix::values_type::non_const_type;
using HostVector = Kokkos::View<double*, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

// A device copy of `host` in a view of type V (one of the matrix's arrays or a vector).
template <class V, class T>
V to_device(const std::vector<T>& host, const std::string& label) {
  V view(label, host.size());
  auto mirror = Kokkos::create_mirror_view(view);
  std::copy(host.begin(), host.end(), mirror.data());
  Kokkos::deep_copy(view, mirror);
  return view;
}

// The dot product of two vectors summed in an order fixed by their length alone: each chunk of
// `chunk` entries in index order, then the chunks' sums in order on the host. KokkosBlas::dot's
// order follows the threads, so its bits would change with the number of Kokkos threads, and the
// state with the number of ranks per node.
constexpr std::size_t chunk = 256;

struct ChunkDots {
  Vector a, b, sums;
  std::size_t n;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t c) const {
    const std::size_t hi = (c + 1) * chunk < n ? (c + 1) * chunk : n;
    double s = 0.0;
    for (std::size_t i = c * chunk; i < hi; ++i) s += a(i) * b(i);
    sums(c) = s;
  }
};

}  // namespace

// A field of Device (whose type may not lie in the anonymous namespace).
class ConductionDot {
 public:
  explicit ConductionDot(std::size_t n)
      : n_(n), sums_("conduction.chunk_sums", (n + chunk - 1) / chunk), host_(sums_.extent(0)) {}
  double operator()(const Vector& a, const Vector& b) const {
    Kokkos::parallel_for("korch conduction dot", Kokkos::RangePolicy<DeviceExecSpace>(0, sums_.extent(0)),
                         ChunkDots{a, b, sums_, n_});
    Kokkos::deep_copy(HostVector(host_.data(), host_.size()), sums_);
    double s = 0.0;
    for (const double chunk_sum : host_) s += chunk_sum;
    return s;
  }

 private:
  std::size_t n_;
  Vector sums_;
  mutable std::vector<double> host_;
};

struct ConductionOperator::Device {
  struct Iterations {
    int iterations = 0;
    double residual = 0;  // ||b - A x||
  };

  Matrix matrix;          // values: W on the diagonal + kappa dt K, set by each solve
  Values laplacian;       // K's entries in the matrix's order
  Values diagonal_share;  // W's entries in the matrix's order (0 off the diagonal)
  Vector weights, ones;
  ConductionDot dot{0};
  Vector b, x, r, p, ap;

  // r = b - A x and its norm.
  double true_residual() {
    Kokkos::deep_copy(r, b);
    KokkosSparse::spmv("N", -1.0, matrix, x, 1.0, r);
    return std::sqrt(dot(r, r));
  }
  // p = r + beta p, deflated (total_weight > 0): less the multiple of the constant vector that keeps
  // wᵀp = 0 (A's product with 1 is w, so p stays A-orthogonal to 1).
  void next_direction(double beta, double total_weight) {
    KokkosBlas::axpby(1.0, r, beta, p);
    if (total_weight > 0) KokkosBlas::axpby(-dot(weights, r) / total_weight, ones, 1.0, p);
  }
  // CG on A x = b from the x given to ||b - A x|| <= target, at most max_iter iterations. With
  // total_weight > 0 (Saad et al.'s deflated CG with the one vector 1): the starting residual has
  // 1ᵀr = 0 (x = T_old), the directions keep it so, and wᵀx = 1ᵀ(b - r) stays the total heat.
  Iterations conjugate_gradients(double target, int max_iter, double total_weight) {
    Iterations out;
    double r_norm = true_residual();
    next_direction(0.0, total_weight);
    double rr = r_norm * r_norm;
    for (;;) {
      if (std::sqrt(rr) <= target) {
        // The recursive residual says so: confirm with the true one, restart from it if not.
        r_norm = true_residual();
        if (r_norm <= target) break;
        next_direction(0.0, total_weight);
        rr = r_norm * r_norm;
      }
      if (out.iterations >= max_iter) break;
      KokkosSparse::spmv("N", 1.0, matrix, p, 0.0, ap);
      const double p_ap = dot(p, ap);
      if (!(p_ap > 0) || !std::isfinite(p_ap)) break;  // breakdown (round-off only: A is SPD)
      const double alpha = rr / p_ap;
      KokkosBlas::axpby(alpha, p, 1.0, x);    // x += alpha p
      KokkosBlas::axpby(-alpha, ap, 1.0, r);  // r -= alpha A p
      const double rr_new = dot(r, r);
      next_direction(rr_new / rr, total_weight);
      rr = rr_new;
      ++out.iterations;
    }
    out.residual = r_norm <= target ? r_norm : true_residual();
    return out;
  }
};

ConductionOperator::ConductionOperator(const ConductionSystem& system)
    : rows_(system.rows()),
      weights_(system.weights()),
      uniform_weights_(std::all_of(weights_.begin(), weights_.end(), [this](double w) { return w == weights_[0]; })),
      total_weight_(std::accumulate(weights_.begin(), weights_.end(), 0.0)),
      device_(std::make_unique<Device>()) {
  std::vector<double> diagonal_share(system.columns().size(), 0.0);
  for (int row = 0; row < rows_; ++row)
    for (std::size_t e = system.row_start()[static_cast<std::size_t>(row)];
         e < system.row_start()[static_cast<std::size_t>(row) + 1]; ++e)
      if (system.columns()[e] == row) diagonal_share[e] = weights_[static_cast<std::size_t>(row)];
  Device& d = *device_;
  d.weights = to_device<Vector>(weights_, "conduction.weights");
  d.ones = Vector("conduction.ones", weights_.size());
  Kokkos::deep_copy(d.ones, 1.0);
  d.laplacian = to_device<Values>(system.laplacian(), "conduction.laplacian");
  d.diagonal_share = to_device<Values>(diagonal_share, "conduction.diagonal");
  auto row_map = to_device<Matrix::row_map_type::non_const_type>(system.row_start(), "conduction.row_map");
  auto entries = to_device<Matrix::index_type::non_const_type>(system.columns(), "conduction.entries");
  Values values("conduction.values", system.laplacian().size());
  d.matrix = Matrix("conduction.matrix", rows_, rows_, values.extent(0), values, row_map, entries);
  const auto n = static_cast<std::size_t>(rows_);
  d.b = Vector("conduction.b", n);
  d.x = Vector("conduction.x", n);
  d.r = Vector("conduction.r", n);
  d.p = Vector("conduction.p", n);
  d.ap = Vector("conduction.ap", n);
  d.dot = ConductionDot(n);
}

#else

struct ConductionOperator::Device {};

ConductionOperator::ConductionOperator(const ConductionSystem& system)
    : rows_(system.rows()), weights_(system.weights()) {}

#endif  // KORCH_HAVE_KOKKOSKERNELS

ConductionOperator::~ConductionOperator() = default;

ConductionResult ConductionOperator::solve(std::vector<double>& temperature, double kappa_dt, double tol, int max_iter,
                                           const std::string& who) const {
  if (temperature.size() != weights_.size())
    throw Error::format("{}: {} temperatures for a system of {} cells: pass one per cell", who, temperature.size(),
                        weights_.size());
#if !KORCH_HAVE_KOKKOSKERNELS
  (void)kappa_dt;
  (void)tol;
  (void)max_iter;
  throw Error::format(
      "{}: korch was built without Kokkos Kernels (KORCH_HAVE_KOKKOSKERNELS is 0): implicit conduction "
      "needs it; rebuild korch with Kokkos Kernels found",
      who);
#else
  const std::size_t cells = temperature.size();
  Device& d = *device_;
  Kokkos::deep_copy(d.matrix.values, d.diagonal_share);
  KokkosBlas::axpby(kappa_dt, d.laplacian, 1.0, d.matrix.values);  // W + kappa dt K
  std::vector<double> heat(cells);
  for (std::size_t c = 0; c < cells; ++c) heat[c] = weights_[c] * temperature[c];
  Kokkos::deep_copy(d.b, HostVector(heat.data(), cells));
  const double b_norm = std::sqrt(d.dot(d.b, d.b));
  if (b_norm == 0) return {};  // T = 0 stays 0
  Kokkos::deep_copy(d.x, HostVector(temperature.data(), cells));
  const Device::Iterations cg = d.conjugate_gradients(tol * b_norm, max_iter, uniform_weights_ ? 0.0 : total_weight_);
  if (cg.residual > tol * b_norm)
    throw Error::format(
        "{}: CG did not reach the relative tolerance {:g} in {} iterations (max_iter {}): "
        "relative residual {:g}; raise max_iter or tol, or take a smaller dt",
        who, tol, cg.iterations, max_iter, cg.residual / b_norm);
  Kokkos::deep_copy(HostVector(temperature.data(), cells), d.x);
  return {cg.iterations, cg.residual / b_norm};
#endif
}

}  // namespace korch::hydro
