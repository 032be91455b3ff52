// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The guard-cell fill of a rank's blocks: copies between the rank's own blocks, the boundary
// conditions of the domain, and nonblocking messages between ranks — one message each way per
// neighbouring rank per fill, packed from index lists made once, into buffers kept across fills
// (docs/ranks.md).
//
// Every guard cell takes the value of one interior cell of the whole grid: its own position wrapped
// (periodic) or clamped (outflow) into the domain, per direction. So the fill is a list of copies
// of interior cells, independent of order, covering faces, edges and corners alike, in 2-D and 3-D.
// Guard cells exist in the first guard_dims directions of the grid (GridSpec).
//
// A code's own blocks (a korch::BlockList or any DataSource, any layout, blocks of different sizes)
// are filled from their neighbour lists (block_neighbours.hpp): each guard cell from the interior of
// the block named in its direction, or the block's own nearest interior cell at an outflow edge.
//
// Use: fill(first, count) fills every block; or, to overlap communication with work (what
// GuardCellIterator does): start(), then fill_local(b) for every block and, for the blocks that
// need other ranks' cells, wait_some() until they are complete, then finish().
#pragma once

#include <korch/block_neighbours.hpp>
#include <korch/communicator.hpp>
#include <korch/data_source.hpp>
#include <korch/decomposition.hpp>
#include <korch/grid.hpp>
#include <korch/guard_cell_boundary.hpp>
#include <korch/trace.hpp>
#include <korch/transfer_bytes.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace korch {

namespace detail {
struct GuardCellPlan;
class PeerMessages;
class ResidentGuardFill;
}  // namespace detail

struct ExchangeCounts {
  int neighbour_ranks = 0;          // ranks this rank exchanges messages with
  std::size_t cells_sent = 0;       // guard cells per variable sent per fill (= received)
  std::size_t local_copies = 0;     // guard cells per variable copied within the rank per fill
  int blocks_needing_messages = 0;  // blocks with a guard cell owned by another rank
};

// How the messages of blocks kept in device memory (a resident grid, a code's device arrays) travel
// between ranks (docs/residency.md, "Guard cells").
enum class DeviceMessages {
  automatic,  // straight from device memory where the MPI library reports it can, staged otherwise
  staged,     // gathered on the device, copied through pinned host memory, sent from there
  direct,     // straight from device memory (GPU-aware MPI); an error where the library does not report it
};

class GuardCellExchange {
 public:
  // `grid` holds the blocks `decomposition` gives to `comm.rank()` (GridSpec::owned_blocks) and its
  // blocks[] must match the decomposition's. Throws korch::Error when they do not, or when a block
  // has fewer interior cells than guard cells in a direction with guard cells.
  GuardCellExchange(const Grid& grid, const Decomposition& decomposition, std::array<BoundaryKind, 3> boundary,
                    Communicator comm = Communicator::world());
  // The blocks of `source` (this rank's; each with its own global id, BlockMeta::global_id) filled
  // from `neighbours`, `width[d]` guard cells per side in direction d (-1: every block's own guard
  // cells). Collective over `comm`: every rank of it constructs its exchange at the same time. Throws
  // the same korch::Error on every rank, naming the block, the direction and the sizes, when the
  // lists cannot fill the guard cells: a direction not described, an unknown global id or a wrong
  // rank, lists that disagree across ranks, faces of different sizes, a neighbour with fewer interior
  // cells than guard cells to fill, a width beyond a block's guard cells.
  GuardCellExchange(const DataSource& source, const NeighbourList& neighbours,
                    Communicator comm = Communicator::world(), std::array<int, 3> width = {-1, -1, -1});
  ~GuardCellExchange();
  GuardCellExchange(const GuardCellExchange&) = delete;
  GuardCellExchange& operator=(const GuardCellExchange&) = delete;

  // Fills the guard cells of variables [first, first + count) of every block and returns when done.
  void fill(int first, int count);

  // Posts the receives, packs the interiors other ranks need and sends them (the variables
  // [first, first + count) until finish()). Throws when a fill is already in progress.
  void start(int first, int count);
  // Copies the guard cells of `block` whose sources are on this rank (boundaries included), then
  // runs the boundary fill for its directions marked Neighbour::user(). For a block in
  // blocks_without_messages() at any time after start(); for the others once wait_some() named them.
  void fill_local(int block);
  // Copies the guard cells that the rank's other blocks take from the interior of `block` (the
  // copies fill_local would make for them; each block's copies are made once per fill). After it,
  // work on `block` may write its interior without changing or racing with any other block's fill:
  // GuardCellIterator calls it before it hands a block out, so guard cells hold the values of the
  // start of the cycle even when the cycle updates the filled variables in place.
  void fill_readers_of(int block);
  // The code's own boundary condition, for the directions its neighbour lists mark
  // Neighbour::user(): fills the guard cells of `block` (a source id) in `direction` (each component
  // -1, 0, +1; the region beyond the block's faces where the component is not 0) for variables
  // [first, first + count), through source().block_view(block). Runs on the thread that fills, after
  // the block's copies, so it may read the block's other guard cells. Required before start() when a
  // list names Neighbour::user().
  using BoundaryFill = std::function<void(int block, const Direction& direction, int first, int count)>;
  void set_boundary_fill(BoundaryFill fill) { boundary_fill_ = std::move(fill); }
  // Blocks (ids ascending) whose guard cells need nothing from another rank.
  const std::vector<int>& blocks_without_messages() const noexcept { return local_only_; }
  // Waits until at least one outstanding message arrived and unpacks it; returns the blocks whose
  // remote guard cells became complete (fill_local still needed); may be empty while messages are
  // outstanding (a block waits for several), and is empty once none is.
  std::vector<int> wait_some();
  // Messages of this fill not yet received.
  int messages_outstanding() const noexcept { return outstanding_; }
  // Waits for the sends; the fill is over.
  void finish();
  // Drops a fill in progress (a failed cycle): waits up to 20 s for the messages the other ranks
  // sent for it (so the next fill does not take them), then cancels what has not come and
  // releases the requests. No throw.
  void abandon() noexcept;
  bool in_progress() const noexcept { return active_; }

  const ExchangeCounts& counts() const noexcept { return counts_; }
  // A resident grid (GridSpec::resident) fills each block on the side that holds its variables
  // (docs/residency.md): what its fills copied between host and device so far (variables claimed
  // for a side, guard cells and messages staged across); zero for other sources.
  TransferBytes device_transfers() const noexcept;
  // The default is KORCH_GPU_AWARE_MPI (auto, 0: staged, 1: direct), automatic when unset. A message
  // goes straight from device memory only when every cell it carries lies in a block on the device.
  // Throws korch::Error for direct where the MPI library does not report device memory support, or
  // during a fill.
  void set_device_messages(DeviceMessages mode);
  // Whether messages of device blocks go straight from device memory (the mode, resolved here).
  bool direct_device_messages() const noexcept { return direct_device_messages_; }
  const Communicator& communicator() const noexcept { return comm_; }
  // The blocks this exchange fills.
  const DataSource& source() const noexcept { return source_; }
  // Events of category "communication" go to `trace` when set: "pack+send", "wait", "unpack", and
  // "messages in flight" from the first receive posted to the last message unpacked.
  void set_trace(Trace* trace) noexcept { trace_ = trace; }

 private:
  void adopt(detail::GuardCellPlan plan);
  void pack_message(std::size_t peer);
  void unpack_message(std::size_t peer);
  void copy_local(int block);

  const DataSource& source_;
  Communicator comm_;
  std::unique_ptr<detail::GuardCellPlan> plan_;
  std::vector<double*> base_;               // per block: cell (var 0, 0, 0, 0)
  std::vector<std::ptrdiff_t> var_stride_;  // per block
  std::uint64_t layout_stamp_ = 0;          // the source's layout when planned
  std::vector<int> remote_pending_;         // per block: messages still needed in this fill
  std::vector<int> local_only_;
  std::vector<std::vector<int>> readers_;  // per block: the other blocks copying from its interior
  std::vector<char> copied_;               // per block: its local copies made in this fill
  std::unique_ptr<detail::PeerMessages> messages_;
  bool direct_device_messages_ = false;
  std::unique_ptr<detail::ResidentGuardFill> resident_;  // the source's, when it is a resident grid
  ExchangeCounts counts_;
  Trace* trace_ = nullptr;
  BoundaryFill boundary_fill_;
  bool active_ = false;
  int first_ = 0, count_ = 0;
  int outstanding_ = 0;
  std::int64_t flight_begin_ns_ = 0;
};

}  // namespace korch
