// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Airfoil: the O-grid generator and the Problem's loops (the files: airfoil_files.cpp).
#include "airfoil.hpp"

#include <korch/error.hpp>
#include <korch/mesh/arg.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace korch::mesh::airfoil {

namespace {

// Node (i, j) and cell (i, j) of an O-grid of ni x nj cells: i wraps around the airfoil, j runs
// from the wall (0) to the far field (nj nodes, nj - 1 cells).
struct OGrid {
  int ni, nj;
  int node(int i, int j) const { return j * ni + ((i % ni) + ni) % ni; }
  int cell(int i, int j) const { return j * ni + ((i % ni) + ni) % ni; }
};

// Radial spacing: geometric, s_j = (g^j - 1) / (g^nj - 1), first step about chord / (2 ni) of the
// distance to the far field (g found by bisection; g = 1 when uniform spacing is already finer).
double radial_growth(int ni, int nj, double far_radius) {
  const double first = std::min(0.5 / ni / far_radius, 1.0 / nj);
  auto first_step = [nj](double g) { return (g - 1) / (std::pow(g, nj) - 1); };
  double lo = 1.0 + 1e-12, hi = 2.0;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (first_step(mid) > first ? lo : hi) = mid;
  }
  return first < 1.0 / nj ? 0.5 * (lo + hi) : 1.0;
}

// Nodes on rays from the NACA0012 surface to a circle of `far_radius` around mid-chord.
void place_nodes(MeshData& m, const OGrid& o, double far_radius) {
  const int ni = o.ni, nj = o.nj;
  const double pi = 3.14159265358979323846;
  const double g = radial_growth(ni, nj, far_radius);
  auto fraction = [g, nj](int j) { return g == 1.0 ? double(j) / nj : (std::pow(g, j) - 1) / (std::pow(g, nj) - 1); };
  m.x.resize(2 * static_cast<std::size_t>(m.nnode));
  for (int i = 0; i < ni; ++i) {
    const double th = 2 * pi * i / ni;
    const double xs = 0.5 * (1 + std::cos(th));
    const double t = 0.6 * (0.2969 * std::sqrt(xs) - 0.1260 * xs - 0.3516 * xs * xs + 0.2843 * xs * xs * xs -
                            0.1036 * xs * xs * xs * xs);
    const double yb = std::sin(th) >= 0 ? t : -t;
    const double xo = 0.5 + far_radius * std::cos(th), yo = far_radius * std::sin(th);
    for (int j = 0; j <= nj; ++j) {
      const double s = j == nj ? 1.0 : fraction(j);
      m.x[2 * o.node(i, j)] = xs + s * (xo - xs);
      m.x[2 * o.node(i, j) + 1] = yb + s * (yo - yb);
    }
  }
}

double node_x(const MeshData& m, int n) { return m.x[2 * n]; }
double node_y(const MeshData& m, int n) { return m.x[2 * n + 1]; }

// Cells counter-clockwise: (i,j) (i,j+1)... orientation checked numerically.
void make_cells(MeshData& m, const OGrid& o) {
  m.cell.resize(4 * static_cast<std::size_t>(m.ncell));
  for (int j = 0; j < o.nj; ++j)
    for (int i = 0; i < o.ni; ++i) {
      int q[4] = {o.node(i, j), o.node(i + 1, j), o.node(i + 1, j + 1), o.node(i, j + 1)};
      double a = 0;
      for (int k = 0; k < 4; ++k)
        a += node_x(m, q[k]) * node_y(m, q[(k + 1) % 4]) - node_x(m, q[(k + 1) % 4]) * node_y(m, q[k]);
      if (a < 0) std::swap(q[1], q[3]);
      for (int k = 0; k < 4; ++k) m.cell[4 * static_cast<std::size_t>(o.cell(i, j)) + k] = q[k];
    }
}

void cell_centre(const MeshData& m, int c, double& cx, double& cy) {
  cx = cy = 0;
  for (int k = 0; k < 4; ++k) {
    cx += 0.25 * node_x(m, m.cell[4 * c + k]);
    cy += 0.25 * node_y(m, m.cell[4 * c + k]);
  }
}

// (dy, -dx) with d = x_a - x_b must point from c1 to c2 (outward for boundary edges).
void orient(const MeshData& m, int& a, int& b, double tx, double ty) {
  const double dx = node_x(m, a) - node_x(m, b), dy = node_y(m, a) - node_y(m, b);
  if (dy * tx - dx * ty < 0) std::swap(a, b);
}

// The edge of nodes a, b between cells c1 and c2, its nodes ordered so that the normal points c1 -> c2.
void add_edge(MeshData& m, int a, int b, int c1, int c2) {
  double x1, y1, x2, y2;
  cell_centre(m, c1, x1, y1);
  cell_centre(m, c2, x2, y2);
  orient(m, a, b, x2 - x1, y2 - y1);
  m.edge.insert(m.edge.end(), {a, b});
  m.ecell.insert(m.ecell.end(), {c1, c2});
}

void make_edges(MeshData& m, const OGrid& o) {
  for (int j = 0; j < o.nj; ++j)  // radial edges between cells (i-1, j) and (i, j)
    for (int i = 0; i < o.ni; ++i) add_edge(m, o.node(i, j), o.node(i, j + 1), o.cell(i - 1, j), o.cell(i, j));
  for (int j = 1; j < o.nj; ++j)  // ring edges between cells (i, j-1) and (i, j)
    for (int i = 0; i < o.ni; ++i) add_edge(m, o.node(i, j), o.node(i + 1, j), o.cell(i, j - 1), o.cell(i, j));
  m.nedge = static_cast<int>(m.ecell.size() / 2);
}

// Wall (j = 0, bound 1) and far-field (j = nj, bound 2) edges, their normals pointing outward.
void make_boundary_edges(MeshData& m, const OGrid& o) {
  for (int side = 0; side < 2; ++side)
    for (int i = 0; i < o.ni; ++i) {
      const int j = side == 0 ? 0 : o.nj;
      int a = o.node(i, j), b = o.node(i + 1, j);
      const int c = o.cell(i, side == 0 ? 0 : o.nj - 1);
      double cx, cy;
      cell_centre(m, c, cx, cy);
      orient(m, a, b, 0.5 * (node_x(m, a) + node_x(m, b)) - cx, 0.5 * (node_y(m, a) + node_y(m, b)) - cy);
      m.bedge.insert(m.bedge.end(), {a, b});
      m.becell.push_back(c);
      m.bound.push_back(side == 0 ? 1 : 2);
    }
  m.nbedge = static_cast<int>(m.becell.size());
}

}  // namespace

MeshData generate_ogrid(int ni, int nj, double far_radius) {
  if (ni < 8 || nj < 2) throw Error::format("generate_ogrid: ni = {}, nj = {}: need ni >= 8 and nj >= 2", ni, nj);
  if (static_cast<long long>(ni) * (nj + 1) * 2 >= (1LL << 31))
    throw Error::format("generate_ogrid: {} x {} is too large", ni, nj);
  const OGrid o{ni, nj};
  MeshData m;
  m.nnode = ni * (nj + 1);
  m.ncell = ni * nj;
  place_nodes(m, o, far_radius);
  make_cells(m, o);
  make_edges(m, o);
  make_boundary_edges(m, o);
  return m;
}

// ------------------------------------------------------------------------------------------------
Problem::Problem(const MeshData& m, const Constants& c)
    : nodes("nodes", m.nnode),
      edges("edges", m.nedge),
      bedges("bedges", m.nbedge),
      cells("cells", m.ncell),
      pedge("pedge", edges, nodes, 2, m.edge),
      pecell("pecell", edges, cells, 2, m.ecell),
      pbedge("pbedge", bedges, nodes, 2, m.bedge),
      pbecell("pbecell", bedges, cells, 1, m.becell),
      pcell("pcell", cells, nodes, 4, m.cell),
      x("x", nodes, m.x),
      q("q", cells),
      qold("qold", cells),
      res("res", cells),
      adt("adt", cells),
      bound("bound", bedges, m.bound),
      k("k", {c.gam, c.gm1, c.cfl, c.eps, c.qinf[0], c.qinf[1], c.qinf[2], c.qinf[3]}, GlobalKind::Constant),
      rms("rms", 0.0),
      ncell_(m.ncell) {
  x.read_only();
  bound.read_only();
  double* qp = q.host_write();
  double* qo = qold.host_write();
  for (int i = 0; i < m.ncell; ++i)
    for (int n = 0; n < 4; ++n) qp[4 * i + n] = qo[4 * i + n] = c.qinf[n];

  using A = Access;
  auto own = [](auto&& loop) {
    return std::unique_ptr<ParLoopBase>(new std::decay_t<decltype(loop)>(std::move(loop)));
  };
  save_soln_ = own(par_loop("save_soln", SaveSoln{}, cells, arg(q, A::Read), arg(qold, A::Write)));
  adt_calc_ = own(par_loop("adt_calc", AdtCalc{}, cells, arg(x, pcell, 0, A::Read), arg(x, pcell, 1, A::Read),
                           arg(x, pcell, 2, A::Read), arg(x, pcell, 3, A::Read), arg(q, A::Read), arg(adt, A::Write),
                           arg(k, A::Read)));
  res_calc_ = own(par_loop("res_calc", ResCalc{}, edges, arg(x, pedge, 0, A::Read), arg(x, pedge, 1, A::Read),
                           arg(q, pecell, 0, A::Read), arg(q, pecell, 1, A::Read), arg(adt, pecell, 0, A::Read),
                           arg(adt, pecell, 1, A::Read), arg(res, pecell, 0, A::Inc), arg(res, pecell, 1, A::Inc),
                           arg(k, A::Read)));
  bres_calc_ = own(par_loop("bres_calc", BresCalc{}, bedges, arg(x, pbedge, 0, A::Read), arg(x, pbedge, 1, A::Read),
                            arg(q, pbecell, 0, A::Read), arg(adt, pbecell, 0, A::Read), arg(res, pbecell, 0, A::Inc),
                            arg(bound, A::Read), arg(k, A::Read)));
  update_ = own(par_loop("update", Update{}, cells, arg(qold, A::Read), arg(q, A::Write), arg(res, A::RW),
                         arg(adt, A::Read), arg(rms, A::Inc)));
}

double Problem::step(Executor& ex, int k) {
  ex.run(*adt_calc_);
  ex.run(*res_calc_);
  ex.run(*bres_calc_);
  rms.set(0.0);
  ex.run(*update_);
  const double value = std::sqrt(rms.value() / ncell_);
  // rms sums every cell's squared update, so a non-finite cell makes it non-finite: the cells are
  // searched only then.
  if (!std::isfinite(value)) throw_non_finite(k);
  return value;
}

std::array<double, 2> Problem::iterate(Executor& ex) {
  ++iteration_;
  ex.run(*save_soln_);
  const double r0 = step(ex, 0);
  const double r1 = step(ex, 1);
  return {r0, r1};
}

void Problem::throw_non_finite(int k) const {
  const std::vector<double> qs = q.to_vector(), adts = adt.to_vector();
  for (int c = 0; c < ncell_; ++c) {
    const double* qc = &qs[4 * static_cast<std::size_t>(c)];
    const double a = adts[static_cast<std::size_t>(c)];
    if (!std::isfinite(qc[0]) || !std::isfinite(qc[1]) || !std::isfinite(qc[2]) || !std::isfinite(qc[3]) ||
        !std::isfinite(a)) {
      throw Error::format(
          "airfoil: iteration {}, step {}: the state of cell {} is not finite (q = {} {} {} {}, adt = {}): "
          "the mesh may have a cell of zero area or a collapsed edge; check it (and the constants)",
          iteration_, k, c, qc[0], qc[1], qc[2], qc[3], a);
    }
  }
  throw Error::format(
      "airfoil: iteration {}, step {}: the rms is not finite though every cell's state is: the update "
      "overflowed; check the mesh and the constants",
      iteration_, k);
}

CellState Problem::state() const {
  return CellState{q.to_vector(), qold.to_vector(), res.to_vector(), adt.to_vector()};
}

double Problem::max_difference(const CellState& ref) const {
  const CellState s = state();
  double d = 0;
  auto cmp = [&d](const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) throw Error::format("airfoil: comparing states of {} and {} values", a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  };
  cmp(s.q, ref.q);
  cmp(s.qold, ref.qold);
  cmp(s.res, ref.res);
  cmp(s.adt, ref.adt);
  return d;
}

}  // namespace korch::mesh::airfoil
