// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Airfoil files: every reader checks what the file says against what the file holds.
#include "airfoil_files.hpp"

#include <korch/error.hpp>
#include <korch/output_files.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

namespace korch::mesh::airfoil {

namespace {

// A field's name, formatted only when an error needs it (a mesh has millions of fields): a pattern
// with up to two numbers, or a text used as it is.
class FieldName {
 public:
  FieldName(const char* pattern, long a = 0, long b = 0) : pattern_(pattern), a_(a), b_(b) {}
  FieldName(std::string text) : text_(std::move(text)) {}
  std::string text() const { return pattern_ ? fmt::format(fmt::runtime(pattern_), a_, b_) : text_; }

 private:
  const char* pattern_ = nullptr;
  long a_ = 0, b_ = 0;
  std::string text_;
};

// A field's text as quoted in a message: at most 40 characters of it.
std::string shown(const std::string& text) {
  return text.size() <= 40 ? text : text.substr(0, 40) + fmt::format("... ({} characters)", text.size());
}

// Reads a text file line by line; every error names the file, the line and the field.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path) {
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (std::filesystem::is_directory(status)) {
      throw Error::format("'{}' is a folder, not a file: give the file inside it (e.g. {}/mesh.dat)", path, path);
    }
    if (std::filesystem::is_regular_file(status)) {
      const auto size = std::filesystem::file_size(path, error);
      if (!error) size_ = size;
    }
    in_.open(path);
    if (!in_) throw Error::format("cannot open '{}': check the path (and that the data directory exists)", path);
  }
  // The next line's fields; throws at end of file naming what was expected.
  std::vector<std::string> next(const FieldName& what) {
    std::string line;
    if (!std::getline(in_, line)) {
      throw Error::format("file '{}', line {}: unexpected end of file, expected {}", path_, line_ + 1, what.text());
    }
    ++line_;
    std::istringstream s(line);
    std::vector<std::string> fields;
    for (std::string f; s >> f;) fields.push_back(f);
    return fields;
  }
  // Expects exactly the named fields on the next line.
  std::vector<std::string> fields(const FieldName& what, const std::vector<std::string>& names) {
    auto f = next(what);
    if (f.size() != names.size()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : " ") + n;
      throw Error::format("file '{}', line {}: {} has {} fields, expected {} ({})", path_, line_, what.text(), f.size(),
                          names.size(), list);
    }
    return f;
  }
  double real(const std::string& text, const FieldName& field) const {
    const char* b = text.c_str();
    char* e = nullptr;
    errno = 0;
    const double v = std::strtod(b, &e);
    if (e == b || *e != '\0' || errno == ERANGE || !std::isfinite(v)) {
      throw Error::format("file '{}', line {}: field '{}' is '{}', not a finite number", path_, line_, field.text(),
                          shown(text));
    }
    return v;
  }
  int integer(const std::string& text, const FieldName& field, long lo, long hi) const {
    const char* b = text.c_str();
    char* e = nullptr;
    errno = 0;
    const long v = std::strtol(b, &e, 10);
    if (e == b || *e != '\0' || errno == ERANGE) {
      throw Error::format("file '{}', line {}: field '{}' is '{}', not an integer", path_, line_, field.text(),
                          shown(text));
    }
    if (v < lo || v >= hi) {
      throw Error::format("file '{}', line {}: field '{}' is {}, outside [{}, {})", path_, line_, field.text(), v, lo,
                          hi);
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
  // The file's size in bytes; nullopt when it is not a regular file (a pipe).
  std::optional<std::uintmax_t> size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  std::ifstream in_;
  std::optional<std::uintmax_t> size_;
  int line_ = 0;
};

// Every entry takes at least one character and one separator per field, so a header whose counts
// need more bytes than the file has is wrong: say so before allocating for its counts.
void check_counts_fit(const LineReader& r, const MeshData& m) {
  if (!r.size()) return;  // a pipe: the entries are read as they come
  struct Count {
    const char* field;
    int entries;
    int fields_per_entry;
    const char* what;
  };
  std::uintmax_t need = 0;
  for (const Count& c : {Count{"nnode", m.nnode, 2, "nodes"}, Count{"ncell", m.ncell, 4, "cells"},
                         Count{"nedge", m.nedge, 4, "edges"}, Count{"nbedge", m.nbedge, 4, "boundary edges"}}) {
    need += 2 * static_cast<std::uintmax_t>(c.entries) * static_cast<std::uintmax_t>(c.fields_per_entry);
    if (need > *r.size() + 1) {
      throw Error::format(
          "file '{}', line 1: field '{}' is {}: that many {} (after the entries before them) need at "
          "least {} bytes, but the file has {}: check the header's counts, or whether the file was cut short",
          r.path(), c.field, c.entries, c.what, need, *r.size());
    }
  }
}

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
  check_counts_fit(r, m);
  // Reserved only when the file's size vouched for the counts; a pipe's vectors grow as it is read.
  const bool vouched = r.size().has_value();
  auto reserve = [vouched](auto& v, int entries, std::size_t per_entry) {
    if (vouched) v.reserve(static_cast<std::size_t>(entries) * per_entry);
  };
  reserve(m.x, m.nnode, 2);
  for (int n = 0; n < m.nnode; ++n) {
    auto f = r.fields({"node {}", n}, {"x", "y"});
    m.x.push_back(r.real(f[0], {"x of node {}", n}));
    m.x.push_back(r.real(f[1], {"y of node {}", n}));
  }
  reserve(m.cell, m.ncell, 4);
  for (int c = 0; c < m.ncell; ++c) {
    auto f = r.fields({"cell {}", c}, {"n1", "n2", "n3", "n4"});
    for (int k = 0; k < 4; ++k) m.cell.push_back(r.integer(f[k], {"node {} of cell {}", k + 1, c}, 0, m.nnode));
  }
  reserve(m.edge, m.nedge, 2);
  reserve(m.ecell, m.nedge, 2);
  for (int e = 0; e < m.nedge; ++e) {
    auto f = r.fields({"edge {}", e}, {"n1", "n2", "c1", "c2"});
    for (int k = 0; k < 2; ++k) m.edge.push_back(r.integer(f[k], {"n{} of edge {}", k + 1, e}, 0, m.nnode));
    for (int k = 0; k < 2; ++k) m.ecell.push_back(r.integer(f[2 + k], {"c{} of edge {}", k + 1, e}, 0, m.ncell));
  }
  reserve(m.bedge, m.nbedge, 2);
  reserve(m.becell, m.nbedge, 1);
  reserve(m.bound, m.nbedge, 1);
  for (int e = 0; e < m.nbedge; ++e) {
    auto f = r.fields({"boundary edge {}", e}, {"n1", "n2", "c", "bound"});
    for (int k = 0; k < 2; ++k) m.bedge.push_back(r.integer(f[k], {"n{} of boundary edge {}", k + 1, e}, 0, m.nnode));
    m.becell.push_back(r.integer(f[2], {"c of boundary edge {}", e}, 0, m.ncell));
    m.bound.push_back(r.integer(f[3], {"bound of boundary edge {} (1 wall, 2 far field)", e}, 1, 3));
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
  const std::map<std::string, std::size_t> want = {{"gam", 1},  {"gm1", 1},   {"cfl", 1}, {"eps", 1},
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
                          path, r.line(), shown(f[0]));
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
  if (head.empty() || head[0] != "#")
    throw Error::format("file '{}', line 1: expected the header '# cell q0 ... adt'", path);
  const std::vector<std::string> names = {"cell",  "q0",    "q1",   "q2",   "q3",   "qold0", "qold1",
                                          "qold2", "qold3", "res0", "res1", "res2", "res3",  "adt"};
  for (int c = 0; c < ncell; ++c) {
    auto f = r.fields({"cell {}", c}, names);
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
  write_file_atomically(path, [&](const std::string& temporary) {
    std::ofstream o(temporary);
    if (!o) throw Error::format("cannot write '{}': check the directory", path);
    o << fmt::format("{} {} {} {}\n", m.nnode, m.ncell, m.nedge, m.nbedge);
    for (int n = 0; n < m.nnode; ++n) o << fmt::format("{:.17g} {:.17g}\n", m.x[2 * n], m.x[2 * n + 1]);
    for (int c = 0; c < m.ncell; ++c)
      o << fmt::format("{} {} {} {}\n", m.cell[4 * c], m.cell[4 * c + 1], m.cell[4 * c + 2], m.cell[4 * c + 3]);
    for (int e = 0; e < m.nedge; ++e)
      o << fmt::format("{} {} {} {}\n", m.edge[2 * e], m.edge[2 * e + 1], m.ecell[2 * e], m.ecell[2 * e + 1]);
    for (int e = 0; e < m.nbedge; ++e)
      o << fmt::format("{} {} {} {}\n", m.bedge[2 * e], m.bedge[2 * e + 1], m.becell[e], m.bound[e]);
    o.close();
    if (!o) throw Error::format("writing '{}' failed: check the free space", path);
  });
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
  write_file_atomically(path, [&](const std::string& temporary) {
    std::ofstream o(temporary);
    if (!o) throw Error::format("cannot write '{}': check the directory", path);
    o << fmt::format(
        "gam {:.17g}\ngm1 {:.17g}\ncfl {:.17g}\neps {:.17g}\nmach {:.17g}\nalpha {:.17g}\nqinf {:.17g} {:.17g} "
        "{:.17g} {:.17g}\n",
        c.gam, c.gm1, c.cfl, c.eps, c.mach, c.alpha, c.qinf[0], c.qinf[1], c.qinf[2], c.qinf[3]);
    o.close();
    if (!o) throw Error::format("writing '{}' failed: check the free space", path);
  });
}

}  // namespace korch::mesh::airfoil
