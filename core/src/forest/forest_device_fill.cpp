// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "forest_device_fill.hpp"

#include "forest_fill_plan.hpp"

#include <korch/backend/strided_copy.hpp>
#include <korch/error.hpp>

#include <fmt/format.h>

#include <utility>

namespace korch {

namespace {

using GuardCell = detail::ForestDeviceFill::GuardCell;
using DeviceTerm = detail::ForestDeviceFill::Term;
using DeviceSource = detail::ForestDeviceFill::Source;
using GuardCells = Kokkos::View<GuardCell*, DeviceMemSpace>;
using Terms = Kokkos::View<DeviceTerm*, DeviceMemSpace>;
using Sources = Kokkos::View<DeviceSource*, DeviceMemSpace>;

template <class T>
Kokkos::View<T*, DeviceMemSpace> to_device(const char* label, const std::vector<T>& values) {
  Kokkos::View<T*, DeviceMemSpace> out(std::string(label), values.size());
  Kokkos::deep_copy(out, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                             values.data(), values.size()));
  return out;
}

// As ForestGuardFill's replay (forest_fill_plan.cpp): a cell, or the mean summed in child order.
KOKKOS_INLINE_FUNCTION double term_value(const Terms& terms, const Sources& sources, int t, std::int64_t var) {
  const DeviceTerm term = terms(t);
  if (term.count == 1) return sources(term.first).cell[var * sources(term.first).var_stride];
  double sum = 0.0;
  for (int c = 0; c < term.count; ++c) sum += sources(term.first + c).cell[var * sources(term.first + c).var_stride];
  return sum / term.count;
}

// detail::minmod on the device: the smaller one-sided difference of one sign, else 0.
KOKKOS_INLINE_FUNCTION double device_minmod(double a, double b) {
  if (a * b <= 0.0) return 0.0;
  return (a < 0.0 ? -a : a) < (b < 0.0 ? -b : b) ? a : b;
}

// Guard cells [begin, end) of the list, variables [first, last): a free function, as nvcc takes
// device lambdas only there. Each prolongation finds its coarse cell's slopes itself (the host
// finds them once per coarse cell: the same operations, so the same bits). A thread per guard cell
// fills all its variables, reading the cell's description once.
void fill_guard_cells(const DeviceTaskSpace& instance, const GuardCells& cells, const Terms& terms,
                      const Sources& sources, std::int64_t begin, std::int64_t end, int first, int last) {
  const std::int64_t n = end - begin;
  if (n <= 0 || last <= first) return;
  Kokkos::parallel_for(
      "korch guard-cell fill across levels (device)",
      Kokkos::RangePolicy<DeviceTaskSpace, Kokkos::IndexType<std::int64_t>>(instance, 0, n),
      KOKKOS_LAMBDA(std::int64_t c) {
        const GuardCell g = cells(begin + c);
        for (std::int64_t var = first; var < last; ++var) {
          const double centre = term_value(terms, sources, g.term, var);
          double value = centre;
          for (int a = 0; a < g.slopes; ++a) {
            const double hi = term_value(terms, sources, g.term + 1 + 2 * a, var);
            const double lo = term_value(terms, sources, g.term + 2 + 2 * a, var);
            value += device_minmod(hi - centre, centre - lo) * ((g.above >> a) & 1u ? 0.25 : -0.25);
          }
          g.cell[var * g.var_stride] = value;
        }
      });
}

}  // namespace

namespace detail {

ForestDeviceFill::ForestDeviceFill(const BlockForest& forest, std::array<int, 3> cells, std::array<int, 3> guard,
                                   int n_vars, const std::vector<BlockKey>& own,
                                   const std::vector<BlockArray>& own_arrays, const std::vector<BlockKey>& ghosts)
    : plans_(forest, cells, guard, n_vars), n_vars_(n_vars), own_arrays_(own_arrays) {
  const std::ptrdiff_t ni = cells[0] + 2 * guard[0], nj = cells[1] + 2 * guard[1], nk = cells[2] + 2 * guard[2];
  ghost_stride_ = {nj * nk, nk, 1};
  staging_ = Buffer(std::string("korch forest leaf staging (device)"), static_cast<std::size_t>(n_vars * ni * nj * nk));
  for (std::size_t b = 0; b < own.size(); ++b) plans_.set_block(own[b], own_arrays[b]);
  for (const BlockKey& ghost : ghosts) {
    Buffer& buffer = ghosts_[ghost];
    buffer = Buffer(std::string("korch forest ghost leaf (device)"), staging_.extent(0));
    plans_.set_block(ghost, BlockArray::of(buffer.data(), IndexOrder::var_i_j_k, {n_vars, ni, nj, nk},
                                           {ni * nj * nk, nj * nk, nk, 1}));
  }
  flatten(own);
}

// Every own leaf's plan as device guard cells; the terms and sources of each leaf follow those of
// the leaves before it. A plan with cells it cannot express leaves the whole fill to the host.
void ForestDeviceFill::flatten(const std::vector<BlockKey>& own) {
  std::vector<GuardCell> cells;
  std::vector<Term> terms;
  std::vector<Source> sources;
  leaf_begin_.assign(1, 0);
  for (std::size_t b = 0; b < own.size(); ++b) {
    const ForestGuardFill::LeafPlan& plan = plans_.plan_of(own[b], plans_.blocks_.at(own[b]));
    if (!plan.slow.empty()) {
      complete_ = false;
      return;
    }
    const BlockArray& array = own_arrays_[b];
    for (const auto& copy : plan.copies)
      for (int r = 0; r < copy.rows; ++r)
        for (int n = 0; n < copy.count; ++n) {
          const std::ptrdiff_t shift = r * copy.step + n;
          cells.push_back({array.data + copy.at + shift, array.stride[0], static_cast<int>(terms.size()), 0, 0u});
          terms.push_back({static_cast<int>(sources.size()), 1});
          sources.push_back({copy.source.cell + shift, copy.source.var_stride});
        }
    const int term_base = static_cast<int>(terms.size()), source_base = static_cast<int>(sources.size());
    for (const auto& op : plan.ops) cells.push_back({array.data + op.at, array.stride[0], term_base + op.term, 0, 0u});
    for (const auto& p : plan.prolongations)
      for (int t = p.first_target; t < p.first_target + p.targets; ++t) {
        const auto& target = plan.targets[static_cast<std::size_t>(t)];
        cells.push_back({array.data + target.at, array.stride[0], term_base + p.term, p.slopes, target.above});
      }
    for (const ForestGuardFill::Term& term : plan.terms) terms.push_back({source_base + term.first, term.count});
    for (const auto& source : plan.sources) sources.push_back({source.cell, source.var_stride});
    leaf_begin_.push_back(static_cast<std::int64_t>(cells.size()));
  }
  guard_cells_ = to_device("korch forest guard cells (device)", cells);
  terms_ = to_device("korch forest guard-cell terms (device)", terms);
  sources_ = to_device("korch forest guard-cell sources (device)", sources);
}

void ForestDeviceFill::run(std::int64_t begin, std::int64_t end, int first, int last) const {
  std::lock_guard<std::mutex> lock(launching_);
  fill_guard_cells(instance_, guard_cells_, terms_, sources_, begin, end, first, last);
  instance_.fence();
}

void ForestDeviceFill::fill(int first, int end) const { run(0, leaf_begin_.back(), first, end); }

void ForestDeviceFill::fill_leaf(int block, int first, int end) const {
  run(leaf_begin_.at(static_cast<std::size_t>(block)), leaf_begin_.at(static_cast<std::size_t>(block) + 1), first, end);
}

namespace {

// A box as the device copies see it: its first cell's offset from cell (0, 0, 0) of a variable,
// and its extents and strides along i, j and k, in groups for a box of groups (Box::group): a group
// spans 2 cells along each of the forest's first log2(group) axes, its cells lying offset[c] from
// its first in the order the fill's means add them (as pack_box sums them on the host).
struct DeviceBox {
  std::int64_t first = 0;
  StridedBox box;  // of groups (single cells when group is 1)
  Kokkos::Array<std::int64_t, 8> offset{};
  int group = 1;
};

DeviceBox device_box(const ForestGuardFill::Box& box, const std::array<std::int64_t, 3>& stride) {
  DeviceBox d;
  d.group = box.group;
  int axes = 0;
  while ((1 << axes) < box.group) ++axes;
  for (int a = 0; a < 3; ++a) {
    const int step = a < axes ? 2 : 1;
    d.box.extent[a] = (box.hi[a] - box.lo[a]) / step;
    d.box.stride[a] = stride[a] * step;
    d.first += box.lo[a] * stride[a];
  }
  for (int c = 0; c < d.group; ++c)
    for (int a = 0; a < axes; ++a) d.offset[c] += ((c >> a) & 1) * stride[a];
  return d;
}

// compact <- the sum of each group, added from 0 in the means' order.
void gather_group_sums(const DeviceTaskSpace& instance, double* compact, const double* strided, const DeviceBox& d) {
  const std::int64_t nj = d.box.extent[1], nk = d.box.extent[2];
  const std::int64_t si = d.box.stride[0], sj = d.box.stride[1], sk = d.box.stride[2];
  const Kokkos::Array<std::int64_t, 8> offset = d.offset;
  const int size = d.group;
  Kokkos::parallel_for(
      "korch gather of group sums (device)",
      Kokkos::RangePolicy<DeviceTaskSpace, Kokkos::IndexType<std::int64_t>>(instance, 0, d.box.cells()),
      KOKKOS_LAMBDA(std::int64_t c) {
        const std::int64_t k = c % nk, j = (c / nk) % nj, i = c / (nj * nk);
        const double* first = strided + i * si + j * sj + k * sk;
        double sum = 0.0;
        for (int g = 0; g < 8; ++g)  // a fixed count: at most 2^3 cells per group
          if (g < size) sum += first[offset[g]];
        compact[c] = sum;
      });
}

// Each group's sum into its first cell, -0.0 into the others: a mean of them gives the sum's bits.
void scatter_group_sums(const DeviceTaskSpace& instance, double* strided, const double* compact, const DeviceBox& d) {
  const std::int64_t nj = d.box.extent[1], nk = d.box.extent[2];
  const std::int64_t si = d.box.stride[0], sj = d.box.stride[1], sk = d.box.stride[2];
  const Kokkos::Array<std::int64_t, 8> offset = d.offset;
  const int size = d.group;
  Kokkos::parallel_for(
      "korch scatter of group sums (device)",
      Kokkos::RangePolicy<DeviceTaskSpace, Kokkos::IndexType<std::int64_t>>(instance, 0, d.box.cells()),
      KOKKOS_LAMBDA(std::int64_t c) {
        const std::int64_t k = c % nk, j = (c / nk) % nj, i = c / (nj * nk);
        double* first = strided + i * si + j * sj + k * sk;
        first[0] = compact[c];
        for (int g = 1; g < 8; ++g)
          if (g < size) first[offset[g]] = -0.0;
      });
}

}  // namespace

void ForestDeviceFill::pack(int block, const ForestGuardFill::Box& box, int first_var, int n_vars, double* out) const {
  const BlockArray& a = own_arrays_.at(static_cast<std::size_t>(block));
  const DeviceBox d = device_box(box, {a.stride[1], a.stride[2], a.stride[3]});
  const std::int64_t n = d.box.cells();
  if (n == 0) return;
  std::lock_guard<std::mutex> lock(launching_);
  for (int v = 0; v < n_vars; ++v) {
    const double* from = a.data + (first_var + v) * a.stride[0] + d.first;
    if (d.group == 1)
      gather_strided(instance_, staging_.data() + v * n, from, d.box);
    else
      gather_group_sums(instance_, staging_.data() + v * n, from, d);
  }
  Kokkos::deep_copy(instance_, HostValues(out, static_cast<std::size_t>(n * n_vars)),
                    Kokkos::subview(staging_, std::make_pair(std::int64_t{0}, n * n_vars)));
  instance_.fence();
}

void ForestDeviceFill::unpack(const BlockKey& ghost, const ForestGuardFill::Box& box, int first_var, int n_vars,
                              const double* in) const {
  const Buffer& buffer = ghosts_.at(ghost);
  const DeviceBox d = device_box(box, ghost_stride_);
  const std::int64_t n = d.box.cells();
  if (n == 0) return;
  const std::int64_t var_stride = static_cast<std::int64_t>(buffer.extent(0)) / n_vars_;
  std::lock_guard<std::mutex> lock(launching_);
  Kokkos::deep_copy(instance_, Kokkos::subview(staging_, std::make_pair(std::int64_t{0}, n * n_vars)),
                    ConstHostValues(in, static_cast<std::size_t>(n * n_vars)));
  for (int v = 0; v < n_vars; ++v) {
    double* to = buffer.data() + (first_var + v) * var_stride + d.first;
    if (d.group == 1)
      scatter_strided(instance_, to, staging_.data() + v * n, d.box);
    else
      scatter_group_sums(instance_, to, staging_.data() + v * n, d);
  }
  instance_.fence();
}

}  // namespace detail
}  // namespace korch
