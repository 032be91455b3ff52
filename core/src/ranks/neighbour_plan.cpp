// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The guard-cell plan of any data source from its neighbour lists (guard_cell_plan.hpp,
// docs/ranks.md "A code's own blocks").
//
// Every rank gathers a table of every block (global id, rank, cells, guard cells, fill widths and
// neighbour list) once; each rank then checks the whole table, so that a mistake on one rank is the
// same korch::Error on every rank instead of a hang, and walks the guard cells of its own blocks
// (receives and local copies) and of the other ranks' blocks that name one of its own (sends) in
// the same order: receiving blocks by ascending global id, cells in (i, j, k) order.
#include "guard_cell_plan.hpp"

#include <korch/data_source.hpp>
#include <korch/error.hpp>

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace korch::detail {
namespace {

constexpr int kUnset = -1, kOutflow = -2, kNone = -3, kUser = -4;  // a neighbour entry that is not a block
constexpr int kFields = 12 + 2 * 27;

struct Row {
  int global = 0, rank = 0, local = 0;
  std::array<int, 3> cells{}, guard{}, width{};
  std::array<int, 27> id{};     // per direction slot: the neighbour's global id, or kUnset/kOutflow/kNone
  std::array<int, 27> owner{};  // the rank the list names for it
};

// Where a direction's guard cells come from.
struct Source {
  enum Kind { skip, own, other, user } kind = skip;
  int row = -1;         // other: the neighbour's row
  Direction reduced{};  // other: the direction to it (clamped components zeroed)
};

int slot(const Direction& d) { return (d[0] + 1) + 3 * (d[1] + 1) + 9 * (d[2] + 1); }
Direction opposite(const Direction& d) { return {-d[0], -d[1], -d[2]}; }
std::string dir(const Direction& d) { return NeighbourList::name(d); }

std::string describe(const Row& r) {
  return fmt::format("block {} (global id {}, rank {})", r.local, r.global, r.rank);
}

// The checks of this rank's own blocks that need no other rank: an empty text when all is well.
std::string local_problem(const DataSource& source, const NeighbourList& list, std::array<int, 3> width, int rank) {
  if (list.n_blocks() > source.n_blocks())
    return fmt::format("rank {}: the neighbour list describes block {} but {} has blocks 0..{}", rank,
                       list.n_blocks() - 1, source.source_name(), source.n_blocks() - 1);
  for (int b = 0; b < source.n_blocks(); ++b) {
    const auto& m = source.block(b);
    for (int d = 0; d < 3; ++d) {
      const auto D = static_cast<std::size_t>(d);
      const int g = m.interior.lo[D];
      if (d >= list.dims() && (width[D] > 0 || (width[D] < 0 && g > 0)))
        return fmt::format(
            "rank {}: {} block {} has {} guard cells in {} but the neighbour list is {}-D: describe its "
            "neighbours in {} directions (NeighbourList({})) or fill width 0 in {}",
            rank, source.source_name(), b, g, "xyz"[d], list.dims(), d + 1, d + 1, "xyz"[d]);
      if (width[D] > g)
        return fmt::format(
            "rank {}: {} block {} has {} guard cells in {} but the fill asks for {}: fill at most as many "
            "as every block has",
            rank, source.source_name(), b, g, "xyz"[d], width[D]);
    }
  }
  return {};
}

std::vector<Row> gather_rows(const DataSource& source, const NeighbourList& list, const Communicator& comm,
                             std::array<int, 3> width) {
  std::vector<std::uint64_t> mine;
  auto put = [&](int v) { mine.push_back(static_cast<std::uint64_t>(static_cast<std::int64_t>(v))); };
  for (int b = 0; b < source.n_blocks(); ++b) {
    const auto& m = source.block(b);
    put(m.global_id);
    put(comm.rank());
    put(b);
    for (std::size_t d = 0; d < 3; ++d) put(m.interior.hi[d] - m.interior.lo[d]);
    for (std::size_t d = 0; d < 3; ++d) put(m.interior.lo[d]);
    for (std::size_t d = 0; d < 3; ++d)
      put(static_cast<int>(d) >= list.dims() ? std::max(width[d], 0) : width[d] < 0 ? m.interior.lo[d] : width[d]);
    std::array<Neighbour, 27> n{};
    for (const auto& dir : NeighbourList::directions(list.dims()))
      n[static_cast<std::size_t>(slot(dir))] = list.get(b, dir);
    for (const auto& e : n)
      put(e.kind == Neighbour::Kind::block     ? e.global_id
          : e.kind == Neighbour::Kind::outflow ? kOutflow
          : e.kind == Neighbour::Kind::none    ? kNone
          : e.kind == Neighbour::Kind::user    ? kUser
                                               : kUnset);
    for (const auto& e : n) put(e.rank);
  }
  const auto all = comm.all_gather(mine);
  std::vector<Row> rows(all.size() / kFields);
  auto get = [&](std::size_t& at) { return static_cast<int>(static_cast<std::int64_t>(all[at++])); };
  std::size_t at = 0;
  for (auto& r : rows) {
    r.global = get(at);
    r.rank = get(at);
    r.local = get(at);
    for (auto& c : r.cells) c = get(at);
    for (auto& g : r.guard) g = get(at);
    for (auto& w : r.width) w = get(at);
    for (auto& i : r.id) i = get(at);
    for (auto& o : r.owner) o = get(at);
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.global, a.rank, a.local) < std::tie(b.global, b.rank, b.local);
  });
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i].global == rows[i - 1].global)
      throw Error::format(
          "guard-cell exchange: global id {} belongs to block {} on rank {} and block {} on rank {}: give "
          "every block of every rank its own global id (BlockShape::global_id)",
          rows[i].global, rows[i - 1].local, rows[i - 1].rank, rows[i].local, rows[i].rank);
  return rows;
}

class Resolver {
 public:
  Resolver(const std::vector<Row>& rows, int dims) : rows_(rows), dims_(dims) {
    for (std::size_t i = 0; i < rows.size(); ++i) row_of_[rows[i].global] = static_cast<int>(i);
  }

  // The source of every direction of every row, checked.
  std::vector<std::array<Source, 27>> all() const {
    std::vector<std::array<Source, 27>> out(rows_.size());
    for (std::size_t i = 0; i < rows_.size(); ++i)
      for (const auto& d : NeighbourList::directions(dims_)) {
        bool needed = true;
        for (std::size_t a = 0; a < 3; ++a) needed = needed && (d[a] == 0 || rows_[i].width[a] > 0);
        if (needed) out[i][static_cast<std::size_t>(slot(d))] = resolve(static_cast<int>(i), d);
      }
    return out;
  }

 private:
  int entry(const Row& r, const Direction& d) const { return r.id[static_cast<std::size_t>(slot(d))]; }

  // A direction whose faces are outflow is clamped along them; what remains names the source.
  Source resolve(int i, const Direction& d) const {
    const Row& r = rows_[static_cast<std::size_t>(i)];
    Direction reduced = d;
    for (std::size_t a = 0; a < 3; ++a) {
      Direction face{0, 0, 0};
      face[a] = d[a];
      if (d[a] != 0 && entry(r, face) == kOutflow) reduced[a] = 0;
    }
    if (reduced == Direction{0, 0, 0}) return {Source::own, i, reduced};
    const int id = entry(r, reduced);
    if (id == kNone) return {};
    if (id == kUser) return {Source::user, i, reduced};
    if (id == kOutflow) return {Source::own, i, {0, 0, 0}};
    if (id == kUnset)
      throw Error::format(
          "guard-cell exchange: {} has no neighbour in direction {}, which its guard cells in direction {} "
          "need: name the block there, Neighbour::outflow(), Neighbour::user() or Neighbour::none()",
          describe(r), dir(reduced), dir(d));
    const auto found = row_of_.find(id);
    if (found == row_of_.end())
      throw Error::format(
          "guard-cell exchange: {} names block {} in direction {}, but no rank has a block of that global "
          "id: name an existing block (BlockMeta::global_id)",
          describe(r), id, dir(reduced));
    const Row& n = rows_[static_cast<std::size_t>(found->second)];
    check_pair(r, n, reduced);
    return {Source::other, found->second, reduced};
  }

  void check_pair(const Row& r, const Row& n, const Direction& d) const {
    const int claimed = r.owner[static_cast<std::size_t>(slot(d))];
    if (claimed != n.rank)
      throw Error::format(
          "guard-cell exchange: {} names block {} on rank {} in direction {}, but rank {} owns it: name "
          "the owner's rank",
          describe(r), n.global, claimed, dir(d), n.rank);
    for (std::size_t a = 0; a < 3; ++a) {
      if (d[a] == 0 && n.cells[a] != r.cells[a])
        throw Error::format(
            "guard-cell exchange: {} has {} cells in {} but its neighbour block {} (rank {}) in direction "
            "{} has {}: blocks may differ in size only across the face they share",
            describe(r), r.cells[a], "xyz"[a], n.global, n.rank, dir(d), n.cells[a]);
      if (d[a] != 0 && n.cells[a] < r.width[a])
        throw Error::format(
            "guard-cell exchange: {} fills {} guard cells in {} from block {} (rank {}) in direction {}, "
            "which has only {} interior cells there: fill fewer guard cells or use larger blocks",
            describe(r), r.width[a], "xyz"[a], n.global, n.rank, dir(d), n.cells[a]);
    }
    bool back_needed = true;
    for (std::size_t a = 0; a < 3; ++a) back_needed = back_needed && (d[a] == 0 || n.width[a] > 0);
    const int back = entry(n, opposite(d));
    if (back_needed && back != kNone &&
        (back != r.global || n.owner[static_cast<std::size_t>(slot(opposite(d)))] != r.rank))
      throw Error::format(
          "guard-cell exchange: the neighbour lists disagree: {} names block {} (rank {}) in direction {}, "
          "but that block names {} in direction {}: describe each pair of neighbours on both sides",
          describe(r), n.global, n.rank, dir(d),
          back >= 0 ? fmt::format("block {} on rank {}", back, n.owner[static_cast<std::size_t>(slot(opposite(d)))])
          : back == kOutflow ? std::string("the outflow boundary")
          : back == kUser    ? std::string("the code's boundary fill")
                             : std::string("nothing"),
          dir(opposite(d)));
  }

  const std::vector<Row>& rows_;
  int dims_;
  std::unordered_map<int, int> row_of_;
};

// Every guard cell of `r` in (i, j, k) order, with its source row and stored position.
template <class Visit>
void each_guard_cell(const std::vector<Row>& rows, const std::vector<std::array<Source, 27>>& sources, int i,
                     Visit&& visit) {
  const Row& r = rows[static_cast<std::size_t>(i)];
  std::array<int, 3> lo{}, hi{};
  for (std::size_t a = 0; a < 3; ++a) {
    lo[a] = r.guard[a] - r.width[a];
    hi[a] = r.guard[a] + r.cells[a] + r.width[a];
  }
  std::array<int, 3> l{}, x{}, src{};
  Direction d{};
  for (l[0] = lo[0]; l[0] < hi[0]; ++l[0])
    for (l[1] = lo[1]; l[1] < hi[1]; ++l[1])
      for (l[2] = lo[2]; l[2] < hi[2]; ++l[2]) {
        for (std::size_t a = 0; a < 3; ++a) {
          x[a] = l[a] - r.guard[a];
          d[a] = x[a] < 0 ? -1 : x[a] >= r.cells[a] ? 1 : 0;
        }
        if (d == Direction{0, 0, 0}) continue;
        const Source& s = sources[static_cast<std::size_t>(i)][static_cast<std::size_t>(slot(d))];
        if (s.kind == Source::skip || s.kind == Source::user) continue;
        const Row& n = rows[static_cast<std::size_t>(s.row)];
        for (std::size_t a = 0; a < 3; ++a) {
          int c = x[a];
          if (d[a] != 0 && s.reduced[a] == 0)
            c = std::clamp(c, 0, r.cells[a] - 1);
          else if (s.reduced[a] < 0)
            c += n.cells[a];
          else if (s.reduced[a] > 0)
            c -= r.cells[a];
          src[a] = c + n.guard[a];
        }
        visit(l, s.row, src);
      }
}

}  // namespace

GuardCellPlan plan_neighbours(const DataSource& source, const NeighbourList& list, const Communicator& comm,
                              std::array<int, 3> width) {
  const int me = comm.rank();
  for (const auto& text : comm.all_gather(local_problem(source, list, width, me)))
    if (!text.empty()) throw Error("guard-cell exchange: " + text);
  const auto rows = gather_rows(source, list, comm, width);
  const auto sources = Resolver(rows, list.dims()).all();

  std::vector<std::array<std::ptrdiff_t, 3>> stride(static_cast<std::size_t>(source.n_blocks()));
  for (int b = 0; b < source.n_blocks(); ++b) {
    const auto v = source.block_view(b);
    stride[static_cast<std::size_t>(b)] = {static_cast<std::ptrdiff_t>(v.stride(1)),
                                           static_cast<std::ptrdiff_t>(v.stride(2)),
                                           static_cast<std::ptrdiff_t>(v.stride(3))};
  }
  auto offset = [&](int block, const std::array<int, 3>& l) {
    const auto& s = stride[static_cast<std::size_t>(block)];
    return l[0] * s[0] + l[1] * s[1] + l[2] * s[2];
  };

  GuardCellPlan plan;
  plan.local.assign(static_cast<std::size_t>(source.n_blocks()), {});
  plan.user.assign(static_cast<std::size_t>(source.n_blocks()), {});
  std::map<int, PeerPlan> peers;
  auto peer = [&](int rank) -> PeerPlan& {
    auto& p = peers[rank];
    p.rank = rank;
    return p;
  };
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const Row& r = rows[static_cast<std::size_t>(i)];
    if (r.rank == me) {
      for (const auto& d : NeighbourList::directions(list.dims()))
        if (sources[static_cast<std::size_t>(i)][static_cast<std::size_t>(slot(d))].kind == Source::user)
          plan.user[static_cast<std::size_t>(r.local)].push_back(d);
      each_guard_cell(rows, sources, i, [&](const std::array<int, 3>& l, int src_row, const std::array<int, 3>& src) {
        const Row& n = rows[static_cast<std::size_t>(src_row)];
        if (n.rank == me) {
          plan.local[static_cast<std::size_t>(r.local)].push_back(
              {r.local, n.local, offset(r.local, l), offset(n.local, src)});
          return;
        }
        PeerPlan& p = peer(n.rank);
        p.recv.push_back({r.local, -1, offset(r.local, l), -1});
        if (p.blocks.empty() || p.blocks.back() != r.local) p.blocks.push_back(r.local);
      });
      continue;
    }
    bool names_mine = false;
    for (const auto& s : sources[static_cast<std::size_t>(i)])
      names_mine = names_mine || (s.kind == Source::other && rows[static_cast<std::size_t>(s.row)].rank == me);
    if (!names_mine) continue;
    each_guard_cell(rows, sources, i, [&](const std::array<int, 3>&, int src_row, const std::array<int, 3>& src) {
      const Row& n = rows[static_cast<std::size_t>(src_row)];
      if (n.rank == me) peer(r.rank).send.push_back({-1, n.local, -1, offset(n.local, src)});
    });
  }
  for (auto& [rank, p] : peers) {
    // Receiving blocks come by ascending global id; readiness is tracked by local id.
    std::sort(p.blocks.begin(), p.blocks.end());
    p.blocks.erase(std::unique(p.blocks.begin(), p.blocks.end()), p.blocks.end());
    plan.peers.push_back(std::move(p));
  }
  return plan;
}

}  // namespace korch::detail
