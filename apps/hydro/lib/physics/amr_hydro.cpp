// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Euler scheme on an adaptive mesh (see amr_hydro.hpp).
#include "amr_hydro.hpp"
#include "euler_host_sweep.hpp"
#include "initial_state.hpp"

#include <korch/backend/cell_range.hpp>
#include <korch/box_view.hpp>
#include <korch/data_packet.hpp>
#include <korch/packet_entry.hpp>
#include <korch/error.hpp>
#include <korch/typed_action.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace korch::hydro {

namespace {

// One variable of one leaf of the mesh, indexed like the update's boxes (guard cells counted).
StridedCellVar leaf_var(const BlockArray& a, int var) {
  const Kokkos::LayoutStride layout(static_cast<std::size_t>(a.extent[1]), static_cast<std::size_t>(a.stride[1]),
                                    static_cast<std::size_t>(a.extent[2]), static_cast<std::size_t>(a.stride[2]),
                                    static_cast<std::size_t>(a.extent[3]), static_cast<std::size_t>(a.stride[3]));
  return StridedCellVar(a.data + var * a.stride[0], layout);
}

EulerKernel<StridedCellVar> leaf_kernel(const ForestMesh& mesh, int block, const EulerParams& p) {
  const BlockArray& a = mesh.array(block);
  EulerKernel<StridedCellVar> k;
  for (int v = 0; v < n_cons; ++v) {
    k.u[v] = leaf_var(a, p.state + v);
    k.unew[v] = leaf_var(a, p.next_state + v);
  }
  k.p = p;
  const auto h = mesh.cell_size(mesh.own_leaves()[static_cast<std::size_t>(block)].level);
  for (int d = 0; d < 3; ++d) k.p.dx[d] = h[d];
  return k;
}

// One variable of a box as the host sweep's View, where its cells are laid out as korch::Grid's
// (a ForestMesh's leaves are); null otherwise.
template <class View>
HostVar as_grid_layout(const View& v) {
  if constexpr (std::is_same_v<View, HostVar>) {
    return v;
  } else {
    const bool grid_layout = v.stride(2) == 1 && v.stride(1) == v.extent(2) && v.stride(0) == v.extent(1) * v.extent(2);
    return grid_layout ? HostVar(v.data(), v.extent(0), v.extent(1), v.extent(2)) : HostVar();
  }
}

// Where the sweep of a box puts the fluxes through its faces at level jumps: the mesh's face arrays
// of the box's block when the box is the whole block; false otherwise (the record cycle does it).
template <class Box>
bool whole_leaf(const AmrStepParameters& step, const Box& box) {
  if (step.mesh == nullptr) return false;
  const ForestMeshShape& s = step.mesh->shape();
  for (int d = 0; d < 3; ++d)
    if (box.lo()[d] != s.guard[d] || box.hi()[d] != s.guard[d] + s.cells[d]) return false;
  return true;
}

template <class Box>
bool faces_to_record(const AmrStepParameters& step, const Box& box, BoxFaceFluxes& faces) {
  if (!whole_leaf(step, box)) return false;
  const ForestMeshShape& s = step.mesh->shape();
  const int block = box.block_id();
  for (int axis = 0; axis < s.forest.dims; ++axis) {
    const std::size_t per_var = static_cast<std::size_t>(s.cells[axis == 0 ? 1 : 0]) * s.cells[axis == 2 ? 1 : 2];
    for (int side = 0; side < 2; ++side) {
      const auto next = step.mesh->face_neighbour(block, axis, side);
      if (next != ForestNeighbour::Kind::coarser && next != ForestNeighbour::Kind::finer) continue;
      double* face = step.mesh->face_flux(block, axis, side);
      std::fill(face + static_cast<std::size_t>(step.euler.state) * per_var,
                face + static_cast<std::size_t>(step.euler.state + n_cons) * per_var, 0.0);
      faces.at[axis][side] = face + static_cast<std::size_t>(step.euler.next_state) * per_var;
    }
  }
  return true;
}

// The fused step's dt of a whole leaf it wrote, less the cells beside faces shared with finer leaves,
// which the flux correction changes afterwards (their dt comes then: amr_face_cells_dt).
template <class Box>
double dt_away_from_finer_faces(const AmrStepParameters& step, const Box& box, const HostVar (&vars)[n_grid_vars],
                                const EulerParams& p) {
  int lo[3], hi[3];
  for (int d = 0; d < 3; ++d) {
    lo[d] = box.lo()[d];
    hi[d] = box.hi()[d];
  }
  for (int axis = 0; axis < step.mesh->shape().forest.dims; ++axis) {
    if (step.mesh->face_neighbour(box.block_id(), axis, 0) == ForestNeighbour::Kind::finer) ++lo[axis];
    if (step.mesh->face_neighbour(box.block_id(), axis, 1) == ForestNeighbour::Kind::finer) --hi[axis];
  }
  return box_dt_host(vars, p, lo, hi);
}

bool fused_step(const AmrStepParameters& step) {
  return step.fill_var >= 0 || step.block_dt != nullptr || step.block_estimate != nullptr;
}

// The update of one box with its block's cell size, on the box's own instance: the host sweep
// (euler_host_sweep.hpp) on host memory in the grid's layout, the per-cell EulerKernel elsewhere
// (device packets, other layouts); both give the same bits.
template <class Box>
void update_amr_box(const AmrStepParameters& step, const Box& box) {
  const EulerParams& base = step.euler;
  using View = typename Box::var_type;
  EulerParams p = base;
  for (int d = 0; d < 3; ++d) p.dx[d] = box.delta()[d];
  const int* lo = box.lo();
  const int* hi = box.hi();
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible) {
    HostVar vars[n_grid_vars];
    bool all = true;
    for (int v = 0; v < n_grid_vars; ++v) {
      vars[v] = as_grid_layout(box.var(v));
      all = all && vars[v].data() != nullptr;
    }
    if (all && (fused_step(step) ? whole_leaf(step, box) : true)) {
      if (step.fill_var >= 0) step.mesh->fill_guard_cells(box.block_id(), step.fill_var, n_cons);
      // Of the state the update reads, while its guard cells are valid and the leaf is in cache.
      if (step.block_estimate != nullptr)
        step.block_estimate[box.block_id()] = step.mesh->regrid_estimate(box.block_id(), *step.regrid);
      BoxFaceFluxes faces;
      const bool record = faces_to_record(step, box, faces);
      update_box_host(vars, p, lo, hi, record ? &faces : nullptr);
      if (record && step.faces_recorded != nullptr) step.faces_recorded[box.block_id()] = 1;
      if (step.block_dt != nullptr) step.block_dt[box.block_id()] = dt_away_from_finer_faces(step, box, vars, p);
      return;
    }
  }
  if (fused_step(step))
    throw Error::format(
        "hydro on an adaptive mesh: the fused step (guard fill, time step or refinement estimate inside the update) "
        "got a box of block {} that is not a whole leaf in host memory: run it on a host team that takes whole leaves",
        box.block_id());
  EulerKernel<View> k;
  for (int v = 0; v < n_cons; ++v) {
    k.u[v] = box.var(p.state + v);
    k.unew[v] = box.var(p.next_state + v);
  }
  k.p = p;
  Kokkos::parallel_for("korch hydro amr update",
                       cell_policy<3>(box.space(), {lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}), k);
  box.space().fence();
}

// The update, its time added to the block's measured cost (--balance cost) when step.block_ns is set.
template <class Box>
void timed_update(const AmrStepParameters& step, const Box& box) {
  if (step.block_ns == nullptr) return update_amr_box(step, box);
  const auto t0 = std::chrono::steady_clock::now();
  update_amr_box(step, box);
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  step.block_ns[box.block_id()].fetch_add(static_cast<std::int64_t>(ns), std::memory_order_relaxed);
}

// A box of one of the mesh's leaves as the update's box type: what the planner's bodies are handed
// (a block id and a korch::Box in the leaf's index space).
struct LeafBox {
  using var_type = HostVar;
  using execution_space = Kokkos::DefaultHostExecutionSpace;
  const ForestMesh* mesh;
  int block;
  const int* lo_;
  const int* hi_;
  std::array<double, 3> h;

  const int* lo() const { return lo_; }
  const int* hi() const { return hi_; }
  int block_id() const { return block; }
  const double* delta() const { return h.data(); }
  execution_space space() const { return execution_space(); }
  HostVar var(int v) const {
    const BlockArray& a = mesh->array(block);
    return HostVar(a.data + v * a.stride[0], static_cast<std::size_t>(a.extent[1]),
                   static_cast<std::size_t>(a.extent[2]), static_cast<std::size_t>(a.extent[3]));
  }
};

// The faces of a leaf along `axis`: the other axes' interior cells, the lower one fastest.
template <class F>
void for_each_face_cell(const ForestMeshShape& s, int axis, F&& f) {
  const int p = axis == 0 ? 1 : 0, q = axis == 2 ? 1 : 2;
  for (int fq = 0; fq < s.cells[q]; ++fq)
    for (int fp = 0; fp < s.cells[p]; ++fp) f(p, q, fp, fq, fp + s.cells[p] * fq);
}

constexpr double kSedovEnergy = 1.0;  // per unit length in 2D

// Sedov's deposit: the finest cells whose centre lies within r0 of the domain's centre.
std::int64_t finest_cells_within(const ForestMeshShape& s, int finest, double r0) {
  const auto& f = s.forest;
  std::int64_t count = 0;
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::array<double, 3> h{1, 1, 1};
  for (int a = 0; a < f.dims; ++a) {
    n[a] = std::int64_t{f.roots[a]} * s.cells[a] << finest;
    h[a] = (s.domain_hi[a] - s.domain_lo[a]) / static_cast<double>(n[a]);
  }
  // Only the cells near the centre can count: a box of r0 around it.
  std::array<std::int64_t, 3> lo{0, 0, 0}, hi{1, 1, 1};
  for (int a = 0; a < f.dims; ++a) {
    const double c = 0.5 * (s.domain_lo[a] + s.domain_hi[a]);
    lo[a] = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor((c - r0 - s.domain_lo[a]) / h[a])) - 1);
    hi[a] = std::min<std::int64_t>(n[a], static_cast<std::int64_t>(std::ceil((c + r0 - s.domain_lo[a]) / h[a])) + 1);
  }
  for (std::int64_t k = lo[2]; k < hi[2]; ++k)
    for (std::int64_t j = lo[1]; j < hi[1]; ++j)
      for (std::int64_t i = lo[0]; i < hi[0]; ++i) {
        const std::int64_t c[3] = {i, j, k};
        double r2 = 0;
        for (int a = 0; a < f.dims; ++a) {
          const double x =
              s.domain_lo[a] + (static_cast<double>(c[a]) + 0.5) * h[a] - 0.5 * (s.domain_lo[a] + s.domain_hi[a]);
          r2 += x * x;
        }
        count += r2 < r0 * r0;
      }
  return count;
}

}  // namespace

ActionRoutine amr_hydro_routine() {
  const auto update = [](const ActionContext& ctx, const auto& box) {
    const auto& step = ctx.parameters_as<AmrStepParameters>();
    if (box.block_id() == step.fail_block)
      throw Error::format("injected failure (--inject-failure {}): leaf {} of the Morton curve", step.fail_leaf,
                          step.fail_leaf);
    timed_update(step, box);
  };
  return TypedAction("hydro").reads_guard_cells(guard_cells).on_box(update).routine();
}

void amr_update_leaf_box(const AmrStepParameters& step, int block, const int* lo, const int* hi) {
  const auto h = step.mesh->cell_size(step.mesh->own_leaves()[static_cast<std::size_t>(block)].level);
  timed_update(step, LeafBox{step.mesh, block, lo, hi, h});
}

BlockDiagnostics amr_leaf_diagnostics(const ForestMesh& mesh, int block, int rho_var) {
  const ForestMeshShape& s = mesh.shape();
  const auto h = mesh.cell_size(mesh.own_leaves()[static_cast<std::size_t>(block)].level);
  const BlockArray& a = mesh.array(block);
  double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (int i = s.guard[0]; i < s.guard[0] + s.cells[0]; ++i)
    for (int j = s.guard[1]; j < s.guard[1] + s.cells[1]; ++j)
      for (int k = s.guard[2]; k < s.guard[2] + s.cells[2]; ++k) {
        const double r = a.data[rho_var * a.stride[0] + i * a.stride[1] + j * a.stride[2] + k * a.stride[3]];
        sum += r;
        lo = r < lo ? r : lo;
        hi = r > hi ? r : hi;
      }
  double volume = 1.0;
  for (int d = 0; d < s.forest.dims; ++d) volume *= h[static_cast<std::size_t>(d)];
  return BlockDiagnostics{sum * volume, lo, hi};
}

ActionRoutine amr_diagnostics_routine() {
  return TypedAction("diagnostics")
      .on_packet_entry([](const ActionContext& ctx, const PacketEntry& entry) {
        const auto& P = ctx.parameters_as<AmrStepParameters>();
        double volume = 1.0;
        for (int d = 0; d < P.euler.dim; ++d) volume *= entry.meta().delta[d];
        P.diagnostics[entry.block_id()] = entry_diagnostics(ctx.device_space(), entry, P.euler.state, volume);
      })
      .routine();
}

ActionRoutine amr_guard_fill_routine() {
  const auto fill = [](const ActionContext& ctx, const auto& box) {
    if (box.tile_index() > 0) return;  // one fill per block: its first tile (or the block) does it
    const auto& p = ctx.parameters_as<AmrFillParameters>();
    p.mesh->fill_guard_cells(box.block_id(), p.first_var, n_cons);
    if (p.block_dt != nullptr) {
      EulerParams q = p.dt_params;
      q.state = p.first_var;
      p.block_dt[box.block_id()] = amr_leaf_dt(*p.mesh, box.block_id(), q);
    }
    if (p.block_estimate != nullptr)
      p.block_estimate[box.block_id()] = p.mesh->regrid_estimate(box.block_id(), *p.regrid);
  };
  return TypedAction("guard_fill").on_box(fill).routine();
}

void record_face_fluxes(ForestMesh& mesh, const EulerParams& p, int block) {
  const ForestMeshShape& s = mesh.shape();
  const EulerKernel<StridedCellVar> k = leaf_kernel(mesh, block, p);
  for (int axis = 0; axis < s.forest.dims; ++axis)
    for (int side = 0; side < 2; ++side) {
      // Only faces at a level jump are corrected: the others keep what they hold.
      const auto next = mesh.face_neighbour(block, axis, side);
      if (next != ForestNeighbour::Kind::coarser && next != ForestNeighbour::Kind::finer) continue;
      double* face = mesh.face_flux(block, axis, side);
      const std::size_t per_var = static_cast<std::size_t>(s.cells[axis == 0 ? 1 : 0]) * s.cells[axis == 2 ? 1 : 2];
      for_each_face_cell(s, axis, [&](int pa, int qa, int fp, int fq, int at) {
        std::array<int, 3> cell{s.guard[0], s.guard[1], s.guard[2]};
        cell[axis] += side == 0 ? 0 : s.cells[axis];
        cell[pa] += fp;
        cell[qa] += fq;
        double F[5];
        k.low_face_flux(cell[0], cell[1], cell[2], axis, F);
        for (int v = 0; v < n_cons; ++v) {
          face[static_cast<std::size_t>(p.next_state + v) * per_var + static_cast<std::size_t>(at)] = F[v];
          face[static_cast<std::size_t>(p.state + v) * per_var + static_cast<std::size_t>(at)] = 0.0;
        }
      });
    }
}

ActionRoutine amr_face_flux_routine() {
  const auto record = [](const ActionContext& ctx, const auto& box) {
    if (box.tile_index() > 0) return;  // once per block
    const auto& p = ctx.parameters_as<AmrFluxParameters>();
    if (p.faces_recorded != nullptr && p.faces_recorded[box.block_id()] != 0) return;
    record_face_fluxes(*p.mesh, p.params, box.block_id());
  };
  return TypedAction("face_fluxes").on_box(record).routine();
}

namespace {

// Cells [lo, hi) of a leaf, guard cells counted.
struct Range {
  int lo[3], hi[3];
};

Range interior(const ForestMeshShape& s) {
  Range r;
  for (int d = 0; d < 3; ++d) {
    r.lo[d] = s.guard[d];
    r.hi[d] = s.guard[d] + s.cells[d];
  }
  return r;
}

// The largest stable dt of a range of a leaf's interior cells; the first cell that is not physical throws
// (name_bad_cell) or gives unphysical_dt.
double leaf_dt(const ForestMesh& mesh, int b, const EulerParams& p, bool name_bad_cell, const Range& cells) {
  const ForestMeshShape& s = mesh.shape();
  double smallest = std::numeric_limits<double>::infinity();
  const BlockArray& a = mesh.array(b);
  const BlockKey& leaf = mesh.own_leaves()[static_cast<std::size_t>(b)];
  EulerParams q = p;
  const auto h = mesh.cell_size(leaf.level);
  for (int d = 0; d < 3; ++d) q.dx[d] = h[d];
  // k fastest, as the leaves' arrays (korch::Grid's layout).
  for (int i = cells.lo[0]; i < cells.hi[0]; ++i)
    for (int j = cells.lo[1]; j < cells.hi[1]; ++j)
      for (int k = cells.lo[2]; k < cells.hi[2]; ++k) {
        double U[5];
        for (int v = 0; v < n_cons; ++v)
          U[v] = a.data[(p.state + v) * a.stride[0] + i * a.stride[1] + j * a.stride[2] + k * a.stride[3]];
        const double t = cell_dt(U, q);
        if (t == unphysical_dt) {
          if (!name_bad_cell) return unphysical_dt;
          throw Error::format(
              "hydro on an adaptive mesh: cell ({}, {}, {}) of leaf {} is not physical (density {}, energy {}): "
              "lower --cfl or the refinement thresholds",
              i - s.guard[0], j - s.guard[1], k - s.guard[2], leaf.describe(), U[0], U[4]);
        }
        smallest = t < smallest ? t : smallest;
      }
  return smallest;
}

}  // namespace

double amr_leaf_dt(const ForestMesh& mesh, int block, const EulerParams& p) {
  return leaf_dt(mesh, block, p, false, interior(mesh.shape()));
}

double amr_face_cells_dt(const ForestMesh& mesh, int block, const EulerParams& p, int axis, int side) {
  Range r = interior(mesh.shape());
  if (side == 0)
    r.hi[axis] = r.lo[axis] + 1;
  else
    r.lo[axis] = r.hi[axis] - 1;
  return leaf_dt(mesh, block, p, false, r);
}

double amr_stable_dt(const ForestMesh& mesh, const std::vector<double>& block_dt, const EulerParams& p) {
  double smallest = std::numeric_limits<double>::infinity();
  for (std::size_t b = 0; b < block_dt.size(); ++b) {
    if (block_dt[b] == unphysical_dt) leaf_dt(mesh, static_cast<int>(b), p, true, interior(mesh.shape()));
    smallest = block_dt[b] < smallest ? block_dt[b] : smallest;
  }
  return smallest;
}

void set_amr_initial_state(ForestMesh& mesh, const Options& o) {
  const ForestMeshShape& s = mesh.shape();
  const int finest = s.forest.max_level;
  const auto hf = mesh.cell_size(finest);
  const double r0 = 3.5 * hf[0];
  const std::int64_t deposit = o.problem == Problem::sedov ? finest_cells_within(s, finest, r0) : 0;
  double finest_volume = 1.0;
  for (int a = 0; a < s.forest.dims; ++a) finest_volume *= hf[a];
  const double sedov_energy = deposit > 0 ? kSedovEnergy / (static_cast<double>(deposit) * finest_volume) : 0.0;
  const auto finest_state = [&](const double(&x)[3]) -> std::array<double, 5> {
    if (o.problem != Problem::sedov) return conserved_initial_state(o, x);
    double r2 = 0;
    for (int a = 0; a < s.forest.dims; ++a) r2 += (x[a] - 0.5) * (x[a] - 0.5);
    return {1.0, 0, 0, 0, r2 < r0 * r0 ? sedov_energy : 1e-5 / (o.gamma - 1.0)};
  };
  for (int b = 0; b < static_cast<int>(mesh.own_leaves().size()); ++b) {
    const BlockKey& leaf = mesh.own_leaves()[static_cast<std::size_t>(b)];
    const BlockArray& a = mesh.array(b);
    const int f = 1 << (finest - leaf.level);  // finest cells per cell and axis
    std::array<int, 3> sub{1, 1, 1};
    for (int d = 0; d < s.forest.dims; ++d) sub[d] = f;
    const double share = 1.0 / (static_cast<double>(sub[0]) * sub[1] * sub[2]);
    for (int k = 0; k < s.cells[2]; ++k)
      for (int j = 0; j < s.cells[1]; ++j)
        for (int i = 0; i < s.cells[0]; ++i) {
          const std::int64_t c[3] = {leaf.position[0] * s.cells[0] + i, leaf.position[1] * s.cells[1] + j,
                                     leaf.position[2] * s.cells[2] + k};
          std::array<double, 5> U{0, 0, 0, 0, 0};
          for (int sk = 0; sk < sub[2]; ++sk)
            for (int sj = 0; sj < sub[1]; ++sj)
              for (int si = 0; si < sub[0]; ++si) {
                const int at[3] = {si, sj, sk};
                double x[3] = {0.5, 0.5, 0.5};
                for (int d = 0; d < s.forest.dims; ++d)
                  x[d] = s.domain_lo[d] + (static_cast<double>(c[d] * sub[d] + at[d]) + 0.5) * hf[d];
                const auto u = finest_state(x);
                for (int v = 0; v < n_cons; ++v) U[v] += share * u[v];
              }
          for (int v = 0; v < n_cons; ++v) {
            const std::ptrdiff_t cell =
                (i + s.guard[0]) * a.stride[1] + (j + s.guard[1]) * a.stride[2] + (k + s.guard[2]) * a.stride[3];
            a.data[v * a.stride[0] + cell] = U[v];
            a.data[(var_new + v) * a.stride[0] + cell] = U[v];
          }
        }
  }
}

}  // namespace korch::hydro
