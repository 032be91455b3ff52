// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestMesh: an adaptive mesh whose blocks korch stores (docs/adaptive-mesh.md, "Regrids"). A
// BlockForest gives the leaves; each leaf has one host array of cells + 2 * guard cells per axis
// and n_vars variables (variable slowest, then x, y, z: korch::Grid's layout, each variable an
// (i, j, k) array with k fastest); blocks() lists the leaves, in Morton order,
// as a BlockList that Runtime::execute runs actions on. Between cycles, regrid() fills the guard
// cells, estimates each leaf's error (Löhner, refinement_criterion.hpp), refines and coarsens under
// 2:1 balance, fills the new leaves from the old ones (conservative prolongation and restriction:
// every variable's total is kept to round-off) and lists the leaves anew, which the runtime sees as
// a new layout of the source.
//
// On ranks (a Communicator of several), every rank holds the whole forest (it is small) and the
// arrays of its own leaves: a contiguous piece of the Morton curve, the same number of leaves per
// rank. Guard-cell fills first copy, from the ranks that own them, the leaves within two
// neighbours of this rank's own; flux corrections fetch the finer leaves' faces; regrids agree on
// the flags (gathered from every rank), partition the new leaves anew and move the old leaves
// each rank needs to fill its new ones. The results are the bits of one process.
//
//   korch::ForestMesh mesh("density", {{2, {4, 4, 1}, {true, true, false}, 3}, {16, 16, 1}, {2, 2, 0}, 1});
//   mesh.set([](const std::array<double, 3>& x, int) { return std::exp(-50 * (x[0] - .5) * (x[0] - .5)); });
//   for (int step = 0; step < 100; ++step) {
//     if (step % 10 == 0) mesh.regrid({});
//     mesh.fill_guard_cells();
//     runtime.execute(bundle, configuration, mesh.blocks());
//   }
#pragma once

#include <korch/block_forest.hpp>
#include <korch/block_list.hpp>
#include <korch/communicator.hpp>
#include <korch/forest_guard_fill.hpp>
#include <korch/forest_leaves.hpp>
#include <korch/refinement_criterion.hpp>

#include <array>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace korch {

namespace detail {
class ForestGhosts;
}  // namespace detail

struct ForestMeshShape {
  ForestShape forest;
  std::array<int, 3> cells{8, 8, 1};  // interior cells of every block per axis (1 beyond dims)
  std::array<int, 3> guard{2, 2, 0};  // guard cells per side (0 beyond dims)
  int n_vars = 1;
  std::array<double, 3> domain_lo{0, 0, 0}, domain_hi{1, 1, 1};  // the domain's corners
  // The tiles blocks() hands to host teams (BlockShape::tile_cells); 0 along an axis: the whole leaf.
  std::array<int, 3> tile_cells{0, 0, 0};
};

struct RegridOptions {
  std::vector<int> vars;        // the variables estimated (a leaf's estimate is their largest); empty: all
  double refine_above = 0.8;    // refine a leaf whose estimate exceeds this
  double derefine_below = 0.2;  // coarsen a family whose leaves all estimate below this
  LohnerOptions lohner;         // the estimator's filter
  int max_leaves = 0;  // refine only while the leaves stay within this many (largest estimates first); 0: no limit
  // The caller filled the guard cells of `vars` (every variable when empty) just before: the
  // estimate reads them as they are instead of filling them first.
  bool guard_cells_filled = false;
  // Each of this rank's leaves' estimate (block id order), as regrid_estimate() gives it, worked out by the
  // caller (spread over a cycle's threads, say) after filling the guard cells; null: the mesh
  // works them out. Throws korch::Error when the count is not this rank's leaf count.
  const std::vector<double>* estimates = nullptr;
  // Fill every leaf's guard cells once the mesh changed; a caller that fills what it needs itself
  // (a step's fill of its current variables) turns this off.
  bool fill_afterwards = true;
  // Each of this rank's leaves' measured cost (block id order; seconds of its last update, say);
  // null: every leaf costs the same. With costs, the new leaves are shared among the ranks so that
  // their summed costs are about equal along the Morton curve (a refined leaf's children each cost
  // what it did, a merged family the mean of its leaves), and a regrid that changes no leaf still
  // moves leaves between ranks when the busiest rank's cost exceeds the mean by more than
  // `rebalance_above` (a fraction). Throws korch::Error when the count is not this rank's leaf
  // count or a cost is negative or not finite.
  const std::vector<double>* costs = nullptr;
  double rebalance_above = 0.1;
};

struct RegridCounts {
  int refined = 0;    // blocks split (those flagged and those split for balance)
  int derefined = 0;  // families merged
  int leaves = 0;     // leaves afterwards
  int migrated = 0;   // leaves kept as they were that moved to another rank (a rebalance by cost)
};

class ForestMesh : public ForestLeaves {
 public:
  using Function = std::function<double(const std::array<double, 3>& centre, int var)>;

  // Every root block a leaf, values 0, the leaves shared among the ranks of `comm` (collective; the
  // default is this process alone). Throws korch::Error as BlockForest and ForestGuardFill do for a
  // bad shape, for a domain whose hi is not above its lo along the forest's axes, and on several
  // ranks for guard cells wider than half a block (a guard cell must lie within two neighbours).
  ForestMesh(std::string name, const ForestMeshShape& shape, const Communicator& comm = Communicator{});
  ~ForestMesh() override;
  ForestMesh(const ForestMesh&) = delete;
  ForestMesh& operator=(const ForestMesh&) = delete;

  const ForestMeshShape& shape() const noexcept { return shape_; }
  const BlockForest& forest() const noexcept override { return forest_; }
  const Communicator& communicator() const noexcept { return comm_; }
  // This rank's leaves as a data source: block id = index in own_leaves().
  BlockList& blocks() noexcept { return *blocks_; }
  const std::vector<BlockKey>& own_leaves() const noexcept override { return own_; }
  const DataSource& leaf_source() const noexcept override { return *blocks_; }
  int own_block(const BlockKey& leaf) const override;
  std::uint64_t leaves_version() const noexcept override { return version_; }
  int n_vars() const noexcept override { return shape_.n_vars; }
  // The rank that owns a leaf of forest().leaves().
  int owner(int leaf_index) const { return owners_.at(static_cast<std::size_t>(leaf_index)); }
  const BlockArray& array(int block) const;
  // The cell size of a level, per axis.
  std::array<double, 3> cell_size(int level) const;

  // Sets every leaf's interior cells to f(cell centre, var).
  void set(const Function& f);
  // Beyond non-periodic edges (ForestGuardFill::set_boundary); default outflow, which an empty
  // function restores. Collective: a custom boundary's fills may read any cell near a leaf, so the
  // ranks then copy whole leaves to each other, and only what the plans read again without one.
  void set_boundary(ForestGuardFill::BoundaryValue boundary);
  // Fills the guard cells of this rank's leaves (collective).
  void fill_guard_cells();
  // The same in two halves, for a fill spread over threads (a runtime cycle over blocks()): first
  // the copies of the other ranks' leaves (collective; nothing on one rank), then each own leaf,
  // variables first_var .. first_var + n_vars - 1 (n_vars < 0: through the last). Fills of distinct
  // blocks may run at the same time, also beside updates that write other variables.
  void exchange_ghost_leaves();
  void fill_guard_cells(int block, int first_var = 0, int n_vars = -1) const override;
  // The copies of the other ranks' leaves in steps, so that a cycle starts on the leaves that need
  // none while the messages travel (ForestFillIterator does this): start_ghost_copies() sends this
  // rank's leaves that other ranks read and posts the receives (every rank starts before any waits);
  // leaves_without_ghosts() (block ids ascending) can be filled at once; wait_for_ghosts() waits
  // until a message arrived, copies it in and returns the leaves it completed; once
  // ghost_messages_outstanding() is 0, finish_ghost_copies() waits for the sends.
  // abandon_ghost_copies() drops the copies of a failed cycle. exchange_ghost_leaves() does it all.
  // Throws korch::Error naming the call made out of this order.
  void start_ghost_copies(FillBy fill_by = FillBy::action, int first_var = 0, int n_vars = -1) override;
  const std::vector<int>& leaves_without_ghosts() const noexcept override;
  std::vector<int> wait_for_ghosts() override;
  int ghost_messages_outstanding() const noexcept override;
  std::size_t ghost_values_sent() const noexcept override;
  void finish_ghost_copies() override;
  void abandon_ghost_copies() noexcept override;
  // The sum over every rank's leaves of a variable times the cell volume (collective; summed in rank
  // order, so equal on every rank).
  double total(int var) const;

  // Fluxes through a leaf's faces, for the correction at faces shared with finer leaves
  // (docs/adaptive-mesh.md, "Conservation"): the face on `side` (0: low, 1: high) of `axis` holds
  // n_vars x the interior cells of the other axes, variable slowest, then the other axes in
  // ascending order, the lower fastest. An action writes the fluxes its update used there; the
  // arrays are the mesh's until the next regrid. Throws korch::Error naming a bad block, axis or side.
  double* face_flux(int block, int axis, int side);
  // What touches a leaf's face (ForestNeighbour::Kind: same, coarser, finer or boundary), kept from
  // the last regrid: the faces at level jumps are those whose fluxes the correction reads.
  ForestNeighbour::Kind face_neighbour(int block, int axis, int side) const;
  // After a flux-form update of step dt, replaces on every coarse leaf the fluxes through faces
  // shared with finer leaves by the mean of the finer leaves' fluxes there, correcting the coarse
  // cells next to those faces, so each variable's total changes only through the domain's edges.
  // Collective.
  void correct_fluxes(double dt);

  // Estimates, flags and adapts as RegridOptions says (guard cells filled first and afterwards
  // unless it says otherwise; collective).
  // Throws korch::Error naming a variable outside 0 .. n_vars - 1 or cutoffs out of order.
  RegridCounts regrid(const RegridOptions& options);
  // Refines `refine` and then coarsens the families all of whose leaves are in `coarsen` (those not
  // refined), moving the data as regrid() does. Collective: every rank gives the same lists.
  RegridCounts adapt(const std::vector<BlockKey>& refine, const std::vector<BlockKey>& coarsen,
                     bool fill_afterwards = true);
  // The largest Löhner estimate of each of this rank's leaves over `vars` (empty: all), guard cells
  // as they are.
  std::vector<double> estimates(const std::vector<int>& vars, const LohnerOptions& lohner) const;
  // The same for one block; blocks may be estimated at the same time. With `enough`, it may stop
  // once the estimate exceeds it (lohner_estimate).
  double estimate(int block, const std::vector<int>& vars, const LohnerOptions& lohner,
                  double enough = std::numeric_limits<double>::infinity()) const;
  // What regrid() needs of a leaf's estimate: the estimate, or, once it exceeds the cutoff that
  // decides the leaf (refine_above below the finest level, derefine_below on it), a value above
  // that cutoff; the estimate itself when max_leaves ranks the leaves by their estimates.
  double regrid_estimate(int block, const RegridOptions& options) const;

 private:
  void list_leaves();
  std::vector<double> fresh_block() const;
  std::array<int, 3> stored_cells() const;  // per axis, guard cells included
  BlockArray array_of(std::vector<double>& data) const;
  // Old leaves whose data fill the new leaf `leaf` (itself, its old parent and the parent's
  // neighbours, or its old children).
  std::vector<BlockKey> sources_of(const BlockForest& before, const BlockKey& leaf) const;
  // The new leaves' owners: by count, or by the costs regrid() gathered (new leaves' costs from
  // the old ones'); the old owners when the leaves are the same and balanced enough.
  std::vector<int> new_owners(const BlockForest& before, const std::vector<int>& old_owners, bool changed) const;
  void move_old_leaves(const BlockForest& before, const std::vector<int>& old_owners,
                       std::unordered_map<BlockKey, std::vector<double>, BlockKeyHash>& old_data) const;
  // Fetches the faces of other ranks' finer leaves next to this rank's coarser ones: the buffers,
  // and in `faces` where each face (face_id) lies in them.
  std::vector<std::vector<double>> received_faces(std::unordered_map<std::uint64_t, const double*>& faces);
  std::size_t face_size(int axis) const;
  void check_estimated(const std::vector<int>& vars) const;
  void check_costs(const RegridOptions& options)
      const;  // names a bad cost or rebalance_above  // names a variable outside 0 .. n_vars - 1
  const std::vector<ForestNeighbour>& neighbours_of_face(int block, int axis, int side) const;

  std::string name_;
  ForestMeshShape shape_;
  Communicator comm_;
  BlockForest forest_;
  std::vector<int> owners_;  // per leaf index
  // While regrid() adapts with costs: every old leaf's cost (leaf index order) and its threshold.
  std::vector<double> old_leaf_costs_;
  double rebalance_above_ = 0.0;
  std::vector<BlockKey> own_;                     // this rank's leaves, in Morton order (block ids)
  std::unique_ptr<detail::ForestGhosts> ghosts_;  // copies of other ranks' leaves that fills read
  std::uint64_t version_ = 0;                     // leaves_version()
  std::unordered_map<BlockKey, std::vector<double>, BlockKeyHash> data_;  // own leaves and copies
  std::vector<BlockArray> arrays_;                                        // per block id (own leaves)
  std::vector<std::vector<double>> faces_;  // per block id, axis and side: block * 2 * dims + 2 * axis + side
  std::vector<std::vector<ForestNeighbour>> face_neighbours_;  // what touches each of those faces
  std::unique_ptr<ForestGuardFill> fill_;
  ForestGuardFill::BoundaryValue boundary_;
  std::unique_ptr<BlockList> blocks_;
};

}  // namespace korch
