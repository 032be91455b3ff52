// Airfoil: mesh/constant/state files, the O-grid generator and the Problem's loops.
#include "airfoil.hpp"

#include <korch/error.hpp>
#include <korch/mesh/arg.hpp>

#include <fmt/format.h>
#include <fmt/os.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

namespace korch::mesh::airfoil {

namespace {

// Reads a text file line by line; every error names the file, the line and the field.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path), in_(path) {
    if (!in_) throw Error::format("cannot open '{}': check the path (and that the data directory exists)", path);
  }
  // The next line's fields; throws at end of file naming what was expected.
  std::vector<std::string> next(const std::string& what) {
    std::string line;
    if (!std::getline(in_, line)) {
      throw Error::format("file '{}', line {}: unexpected end of file, expected {}", path_, line_ + 1, what);
    }
    ++line_;
    std::istringstream s(line);
    std::vector<std::string> fields;
    for (std::string f; s >> f;) fields.push_back(f);
    return fields;
  }
  // Expects exactly the named fields on the next line.
  std::vector<std::string> fields(const std::string& what, const std::vector<std::string>& names) {
    auto f = next(what);
    if (f.size() != names.size()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : " ") + n;
      throw Error::format("file '{}', line {}: {} has {} fields, expected {} ({})", path_, line_, what, f.size(),
                          names.size(), list);
    }
    return f;
  }
  double real(const std::string& text, const std::string& field) const {
    const char* b = text.c_str();
    char* e = nullptr;
    errno = 0;
    const double v = std::strtod(b, &e);
    if (e == b || *e != '\0' || errno == ERANGE || !std::isfinite(v)) {
      throw Error::format("file '{}', line {}: field '{}' is '{}', not a finite number", path_, line_, field, text);
    }
    return v;
  }
  int integer(const std::string& text, const std::string& field, long lo, long hi) const {
    const char* b = text.c_str();
    char* e = nullptr;
    errno = 0;
    const long v = std::strtol(b, &e, 10);
    if (e == b || *e != '\0' || errno == ERANGE) {
      throw Error::format("file '{}', line {}: field '{}' is '{}', not an integer", path_, line_, field, text);
    }
    if (v < lo || v >= hi) {
      throw Error::format("file '{}', line {}: field '{}' is {}, outside [{}, {})", path_, line_, field, v, lo, hi);
    }
    return static_cast<int>(v);
  }
  bool at_end() {
    std::string rest;
    while (std::getline(in_, rest)) {
      ++line_;
      if (rest.find_first_not_of(" \t\r") != std::string::npos) return false;
    }
    return true;
  }
  int line() const noexcept { return line_; }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  std::ifstream in_;
  int line_ = 0;
};

}  // namespace

MeshData read_mesh(const std::string& path) {
  LineReader r(path);
  MeshData m;
  auto h = r.fields("the header", {"nnode", "ncell", "nedge", "nbedge"});
  constexpr long big = 1L << 30;
  m.nnode = r.integer(h[0], "nnode", 0, big);
  m.ncell = r.integer(h[1], "ncell", 0, big);
  m.nedge = r.integer(h[2], "nedge", 0, big);
  m.nbedge = r.integer(h[3], "nbedge", 0, big);
  m.x.resize(2 * static_cast<std::size_t>(m.nnode));
  for (int n = 0; n < m.nnode; ++n) {
    auto f = r.fields(fmt::format("node {}", n), {"x", "y"});
    m.x[2 * n] = r.real(f[0], fmt::format("x of node {}", n));
    m.x[2 * n + 1] = r.real(f[1], fmt::format("y of node {}", n));
  }
  m.cell.resize(4 * static_cast<std::size_t>(m.ncell));
  for (int c = 0; c < m.ncell; ++c) {
    auto f = r.fields(fmt::format("cell {}", c), {"n1", "n2", "n3", "n4"});
    for (int k = 0; k < 4; ++k) m.cell[4 * c + k] = r.integer(f[k], fmt::format("node {} of cell {}", k + 1, c), 0, m.nnode);
  }
  m.edge.resize(2 * static_cast<std::size_t>(m.nedge));
  m.ecell.resize(2 * static_cast<std::size_t>(m.nedge));
  for (int e = 0; e < m.nedge; ++e) {
    auto f = r.fields(fmt::format("edge {}", e), {"n1", "n2", "c1", "c2"});
    for (int k = 0; k < 2; ++k) m.edge[2 * e + k] = r.integer(f[k], fmt::format("n{} of edge {}", k + 1, e), 0, m.nnode);
    for (int k = 0; k < 2; ++k) m.ecell[2 * e + k] = r.integer(f[2 + k], fmt::format("c{} of edge {}", k + 1, e), 0, m.ncell);
  }
  m.bedge.resize(2 * static_cast<std::size_t>(m.nbedge));
  m.becell.resize(static_cast<std::size_t>(m.nbedge));
  m.bound.resize(static_cast<std::size_t>(m.nbedge));
  for (int e = 0; e < m.nbedge; ++e) {
    auto f = r.fields(fmt::format("boundary edge {}", e), {"n1", "n2", "c", "bound"});
    for (int k = 0; k < 2; ++k) m.bedge[2 * e + k] = r.integer(f[k], fmt::format("n{} of boundary edge {}", k + 1, e), 0, m.nnode);
    m.becell[e] = r.integer(f[2], fmt::format("c of boundary edge {}", e), 0, m.ncell);
    m.bound[e] = r.integer(f[3], fmt::format("bound of boundary edge {} (1 wall, 2 far field)", e), 1, 3);
  }
  if (!r.at_end()) {
    throw Error::format("file '{}', line {}: unexpected data after the {} boundary edges the header announced", path,
                        r.line(), m.nbedge);
  }
  return m;
}

Constants read_constants(const std::string& path) {
  LineReader r(path);
  std::map<std::string, std::vector<double>> values;
  std::map<std::string, int> lines;
  const std::map<std::string, std::size_t> want = {{"gam", 1}, {"gm1", 1},   {"cfl", 1}, {"eps", 1},
                                                   {"mach", 1}, {"alpha", 1}, {"qinf", 4}};
  for (;;) {
    std::vector<std::string> f;
    try {
      f = r.next("a constant");
    } catch (const Error&) {
      break;  // end of file
    }
    if (f.empty() || f[0][0] == '#') continue;
    auto w = want.find(f[0]);
    if (w == want.end()) {
      throw Error::format("file '{}', line {}: unknown constant '{}' (expected gam, gm1, cfl, eps, mach, alpha, qinf)",
                          path, r.line(), f[0]);
    }
    if (f.size() != w->second + 1) {
      throw Error::format("file '{}', line {}: constant '{}' has {} values, expected {}", path, r.line(), f[0],
                          f.size() - 1, w->second);
    }
    std::vector<double> v;
    for (std::size_t k = 1; k < f.size(); ++k) v.push_back(r.real(f[k], fmt::format("{}[{}]", f[0], k - 1)));
    values[f[0]] = v;
  }
  for (const auto& [name, n] : want)
    if (!values.count(name)) throw Error::format("file '{}': constant '{}' is missing ({} value(s))", path, name, n);
  Constants c;
  c.gam = values["gam"][0];
  c.gm1 = values["gm1"][0];
  c.cfl = values["cfl"][0];
  c.eps = values["eps"][0];
  c.mach = values["mach"][0];
  c.alpha = values["alpha"][0];
  for (int k = 0; k < 4; ++k) c.qinf[k] = values["qinf"][k];
  return c;
}

CellState read_state(const std::string& path, int ncell) {
  LineReader r(path);
  CellState s;
  s.q.resize(4 * static_cast<std::size_t>(ncell));
  s.qold.resize(s.q.size());
  s.res.resize(s.q.size());
  s.adt.resize(static_cast<std::size_t>(ncell));
  auto head = r.next("the header line '# cell q0 ...'");
  if (head.empty() || head[0] != "#") throw Error::format("file '{}', line 1: expected the header '# cell q0 ... adt'", path);
  const std::vector<std::string> names = {"cell", "q0", "q1", "q2", "q3", "qold0", "qold1", "qold2",
                                          "qold3", "res0", "res1", "res2", "res3", "adt"};
  for (int c = 0; c < ncell; ++c) {
    auto f = r.fields(fmt::format("cell {}", c), names);
    const int id = r.integer(f[0], "cell", 0, ncell);
    if (id != c) throw Error::format("file '{}', line {}: field 'cell' is {}, expected {}", path, r.line(), id, c);
    for (int k = 0; k < 4; ++k) {
      s.q[4 * c + k] = r.real(f[1 + k], names[1 + k]);
      s.qold[4 * c + k] = r.real(f[5 + k], names[5 + k]);
      s.res[4 * c + k] = r.real(f[9 + k], names[9 + k]);
    }
    s.adt[c] = r.real(f[13], "adt");
  }
  return s;
}

void write_mesh(const MeshData& m, const std::string& path) {
  std::ofstream o(path);
  if (!o) throw Error::format("cannot write '{}': check the directory", path);
  o << fmt::format("{} {} {} {}\n", m.nnode, m.ncell, m.nedge, m.nbedge);
  for (int n = 0; n < m.nnode; ++n) o << fmt::format("{:.17g} {:.17g}\n", m.x[2 * n], m.x[2 * n + 1]);
  for (int c = 0; c < m.ncell; ++c) o << fmt::format("{} {} {} {}\n", m.cell[4 * c], m.cell[4 * c + 1], m.cell[4 * c + 2], m.cell[4 * c + 3]);
  for (int e = 0; e < m.nedge; ++e) o << fmt::format("{} {} {} {}\n", m.edge[2 * e], m.edge[2 * e + 1], m.ecell[2 * e], m.ecell[2 * e + 1]);
  for (int e = 0; e < m.nbedge; ++e) o << fmt::format("{} {} {} {}\n", m.bedge[2 * e], m.bedge[2 * e + 1], m.becell[e], m.bound[e]);
  if (!o) throw Error::format("writing '{}' failed", path);
}

Constants reference_constants() {
  Constants c;
  c.gam = static_cast<double>(1.4f);
  c.gm1 = c.gam - 1.0;  // in double, as the stored constants.txt has it (not 0.4f)
  c.cfl = static_cast<double>(0.9f);
  c.eps = static_cast<double>(0.05f);
  c.mach = static_cast<double>(0.4f);
  c.alpha = 3.0 * std::atan(1.0) / 45.0;
  const double p = 1.0, r = 1.0, u = std::sqrt(c.gam * p / r) * c.mach, e = p / (r * c.gm1) + 0.5 * u * u;
  c.qinf = {r, r * u, 0.0, r * e};
  return c;
}

void write_constants(const Constants& c, const std::string& path) {
  std::ofstream o(path);
  if (!o) throw Error::format("cannot write '{}': check the directory", path);
  o << fmt::format("gam {:.17g}\ngm1 {:.17g}\ncfl {:.17g}\neps {:.17g}\nmach {:.17g}\nalpha {:.17g}\nqinf {:.17g} {:.17g} {:.17g} {:.17g}\n",
                   c.gam, c.gm1, c.cfl, c.eps, c.mach, c.alpha, c.qinf[0], c.qinf[1], c.qinf[2], c.qinf[3]);
}

MeshData generate_ogrid(int ni, int nj, double far_radius) {
  if (ni < 8 || nj < 2) throw Error::format("generate_ogrid: ni = {}, nj = {}: need ni >= 8 and nj >= 2", ni, nj);
  if (static_cast<long long>(ni) * (nj + 1) * 2 >= (1LL << 31)) throw Error::format("generate_ogrid: {} x {} is too large", ni, nj);
  const double pi = 3.14159265358979323846;
  MeshData m;
  m.nnode = ni * (nj + 1);
  m.ncell = ni * nj;
  auto node = [ni](int i, int j) { return j * ni + ((i % ni) + ni) % ni; };
  auto cellid = [ni](int i, int j) { return j * ni + ((i % ni) + ni) % ni; };
  // Radial spacing: geometric, s_j = (g^j - 1) / (g^nj - 1), first step about chord / (2 ni) of the
  // distance to the far field (g found by bisection; g = 1 when uniform spacing is already finer).
  const double first = std::min(0.5 / ni / far_radius, 1.0 / nj);
  auto first_step = [nj](double g) { return (g - 1) / (std::pow(g, nj) - 1); };
  double lo = 1.0 + 1e-12, hi = 2.0;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (first_step(mid) > first ? lo : hi) = mid;
  }
  const double g = first < 1.0 / nj ? 0.5 * (lo + hi) : 1.0;
  auto fraction = [g, nj](int j) { return g == 1.0 ? double(j) / nj : (std::pow(g, j) - 1) / (std::pow(g, nj) - 1); };
  m.x.resize(2 * static_cast<std::size_t>(m.nnode));
  for (int i = 0; i < ni; ++i) {
    const double th = 2 * pi * i / ni;
    const double xs = 0.5 * (1 + std::cos(th));
    const double t = 0.6 * (0.2969 * std::sqrt(xs) - 0.1260 * xs - 0.3516 * xs * xs + 0.2843 * xs * xs * xs - 0.1036 * xs * xs * xs * xs);
    const double yb = std::sin(th) >= 0 ? t : -t;
    const double xo = 0.5 + far_radius * std::cos(th), yo = far_radius * std::sin(th);
    for (int j = 0; j <= nj; ++j) {
      const double s = j == nj ? 1.0 : fraction(j);
      m.x[2 * node(i, j)] = xs + s * (xo - xs);
      m.x[2 * node(i, j) + 1] = yb + s * (yo - yb);
    }
  }
  // Cells counter-clockwise: (i,j) (i,j+1)... orientation checked numerically.
  m.cell.resize(4 * static_cast<std::size_t>(m.ncell));
  auto X = [&](int n) { return m.x[2 * n]; };
  auto Y = [&](int n) { return m.x[2 * n + 1]; };
  for (int j = 0; j < nj; ++j)
    for (int i = 0; i < ni; ++i) {
      int q[4] = {node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)};
      double a = 0;
      for (int k = 0; k < 4; ++k) a += X(q[k]) * Y(q[(k + 1) % 4]) - X(q[(k + 1) % 4]) * Y(q[k]);
      if (a < 0) std::swap(q[1], q[3]);
      for (int k = 0; k < 4; ++k) m.cell[4 * static_cast<std::size_t>(cellid(i, j)) + k] = q[k];
    }
  auto centre = [&](int c, double& cx, double& cy) {
    cx = cy = 0;
    for (int k = 0; k < 4; ++k) {
      cx += 0.25 * X(m.cell[4 * c + k]);
      cy += 0.25 * Y(m.cell[4 * c + k]);
    }
  };
  // (dy, -dx) with d = x_a - x_b must point from c1 to c2 (outward for boundary edges).
  auto orient = [&](int& a, int& b, double tx, double ty) {
    const double dx = X(a) - X(b), dy = Y(a) - Y(b);
    if (dy * tx - dx * ty < 0) std::swap(a, b);
  };
  // The edge of nodes a, b between cells c1 and c2, its nodes ordered so that the normal points c1 -> c2.
  auto add_edge = [&](int a, int b, int c1, int c2) {
    double x1, y1, x2, y2;
    centre(c1, x1, y1);
    centre(c2, x2, y2);
    orient(a, b, x2 - x1, y2 - y1);
    m.edge.insert(m.edge.end(), {a, b});
    m.ecell.insert(m.ecell.end(), {c1, c2});
  };
  for (int j = 0; j < nj; ++j)  // radial edges between cells (i-1, j) and (i, j)
    for (int i = 0; i < ni; ++i) add_edge(node(i, j), node(i, j + 1), cellid(i - 1, j), cellid(i, j));
  for (int j = 1; j < nj; ++j)  // ring edges between cells (i, j-1) and (i, j)
    for (int i = 0; i < ni; ++i) add_edge(node(i, j), node(i + 1, j), cellid(i, j - 1), cellid(i, j));
  m.nedge = static_cast<int>(m.ecell.size() / 2);
  for (int side = 0; side < 2; ++side)
    for (int i = 0; i < ni; ++i) {  // wall (j = 0) and far field (j = nj)
      const int j = side == 0 ? 0 : nj;
      int a = node(i, j), b = node(i + 1, j);
      const int c = cellid(i, side == 0 ? 0 : nj - 1);
      double cx, cy;
      centre(c, cx, cy);
      orient(a, b, 0.5 * (X(a) + X(b)) - cx, 0.5 * (Y(a) + Y(b)) - cy);
      m.bedge.insert(m.bedge.end(), {a, b});
      m.becell.push_back(c);
      m.bound.push_back(side == 0 ? 1 : 2);
    }
  m.nbedge = static_cast<int>(m.becell.size());
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

double Problem::step(Executor& ex) {
  ex.run(*adt_calc_);
  ex.run(*res_calc_);
  ex.run(*bres_calc_);
  rms.set(0.0);
  ex.run(*update_);
  return std::sqrt(rms.value() / ncell_);
}

std::array<double, 2> Problem::iterate(Executor& ex) {
  ex.run(*save_soln_);
  const double r0 = step(ex);
  const double r1 = step(ex);
  return {r0, r1};
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
