// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Mesh loops on ranks: halo refreshes follow the dirty flags (a dat written by one loop and read
// across the partition boundary by the next is right only through the refresh), the execute halo
// completes indirect increments without counting twice in reductions, and globals reduce over ranks.
#include <doctest/doctest.h>

#include <korch/communicator.hpp>
#include <korch/mesh.hpp>

#include <cstdint>
#include <vector>

using namespace korch;
using namespace korch::mesh;

namespace {

// A chain of cells 0 .. n-1, edge e joining cells e and e+1.
struct Chain {
  explicit Chain(int n)
      : cells("cells", n),
        edges("edges", n - 1),
        ecell("ecell", edges, cells, 2, links(n)),
        a("a", cells),
        s("s", edges) {}
  static std::vector<int> links(int n) {
    std::vector<int> v;
    for (int e = 0; e + 1 < n; ++e) v.insert(v.end(), {e, e + 1});
    return v;
  }
  Set cells, edges;
  Map ecell;
  Dat<double, 1> a;  // on cells
  Dat<double, 1> s;  // on edges
};

struct SetToIndexPlusOne {
  double offset;
  KOKKOS_INLINE_FUNCTION void operator()(const double* index, double* a) const { *a = *index + offset; }
};
struct SumOfEnds {
  KOKKOS_INLINE_FUNCTION void operator()(const double* a0, const double* a1, double* s) const { *s = *a0 + *a1; }
};
struct CountEnds {
  KOKKOS_INLINE_FUNCTION void operator()(double* d0, double* d1, int* edges) const {
    *d0 += 1;
    *d1 += 1;
    *edges += 1;
  }
};
struct MinMaxSum {
  KOKKOS_INLINE_FUNCTION void operator()(const double* a, double* lo, double* hi, double* sum) const {
    *lo = *a < *lo ? *a : *lo;
    *hi = *a > *hi ? *a : *hi;
    *sum += *a;
  }
};

// Owned edges of this rank whose s is not a[e] + a[e+1] with a[c] = c + offset, over all ranks.
std::int64_t wrong_edges(const Partition& part, Chain& c, double offset) {
  std::int64_t wrong = 0;
  const double* s = c.s.host_read();
  for (int e : part.of(c.edges).owned)
    if (s[e] != (e + offset) + (e + 1 + offset)) ++wrong;
  return part.communicator().sum(wrong);
}

}  // namespace

TEST_CASE("ranks: a read across the partition boundary is right only through the dirty flag's refresh") {
  const int n = 31;
  Chain c(n);
  std::vector<double> index(n);
  for (int i = 0; i < n; ++i) index[static_cast<std::size_t>(i)] = i;
  Dat<double, 1> cell_index("index", c.cells, index);
  const Partition part(Communicator::world(), c.cells, {c.cells, c.edges}, {c.ecell}, PartitionMethod::Block);
  RankExecutor exec(part);
  const bool ranks = part.size() > 1;
  auto write =
      par_loop("write", SetToIndexPlusOne{1.0}, c.cells, arg(cell_index, Access::Read), arg(c.a, Access::Write));
  auto read = par_loop("read", SumOfEnds{}, c.edges, arg(c.a, c.ecell, 0, Access::Read),
                       arg(c.a, c.ecell, 1, Access::Read), arg(c.s, Access::Write));
  exec.run(write);
  CHECK(c.a.core().halo_dirty() == ranks);
  exec.run(read);
  CHECK(wrong_edges(part, c, 1.0) == 0);
  CHECK(!c.a.core().halo_dirty());
  const auto exchanges = exec.counts().exchanges;
  CHECK(exchanges == (ranks ? 1 : 0));
  // One refresh moves each rank's import halo of a (one double per cell), and what ranks import
  // others export.
  CHECK(exec.counts().bytes_imported == (ranks ? static_cast<std::int64_t>(8 * part.of(c.cells).import.size()) : 0));
  CHECK(part.communicator().sum(exec.counts().bytes_imported) == part.communicator().sum(exec.counts().bytes_exported));
  if (ranks) CHECK(!part.of(c.cells).import.empty());
  exec.run(read);  // a is clean: no second refresh
  CHECK(exec.counts().exchanges == exchanges);

  // The same write with its flag cleared behind the executor's back: the edges crossing a rank
  // boundary read the values of the first write (one per boundary), so the flag is what keeps them right.
  auto rewrite =
      par_loop("rewrite", SetToIndexPlusOne{5.0}, c.cells, arg(cell_index, Access::Read), arg(c.a, Access::Write));
  exec.run(rewrite);
  c.a.core().set_halo_dirty(false);
  exec.run(read);
  CHECK(wrong_edges(part, c, 5.0) == part.size() - 1);
  exec.run(rewrite);
  exec.run(read);
  CHECK(wrong_edges(part, c, 5.0) == 0);
}

TEST_CASE("ranks: indirect increments complete through the execute halo; globals reduce once per element") {
  for (PartitionMethod method : {PartitionMethod::Block, PartitionMethod::Automatic}) {
    const int n = 41;
    Chain c(n);
    const Partition part(Communicator::world(), c.cells, {c.cells, c.edges}, {c.ecell}, method);
    RankExecutor exec(part);
    INFO("partition ", part.method(), " on ", part.size(), " ranks");
    Dat<double, 1> degree("degree", c.cells);
    Global<int> edges("edges", 0);
    auto count = par_loop("count", CountEnds{}, c.edges, arg(degree, c.ecell, 0, Access::Inc),
                          arg(degree, c.ecell, 1, Access::Inc), arg(edges, Access::Inc));
    exec.run(count);
    CHECK(edges.value() == n - 1);
    const double* d = degree.host_read();
    for (int cell : part.of(c.cells).owned) CHECK(d[cell] == (cell == 0 || cell == n - 1 ? 1.0 : 2.0));
    CHECK(degree.core().halo_dirty() == (part.size() > 1));

    std::vector<double> values(n);
    for (int i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = (i * 7) % 13 - 3.5;
    Dat<double, 1> v("v", c.cells, values);
    Global<double> lo("lo", 100.0), hi("hi", -100.0), sum("sum", 1.0);
    auto reduce = par_loop("reduce", MinMaxSum{}, c.cells, arg(v, Access::Read), arg(lo, Access::Min),
                           arg(hi, Access::Max), arg(sum, Access::Inc));
    exec.run(reduce);
    double expected_sum = 1.0, expected_lo = 100.0, expected_hi = -100.0;
    for (double x : values) {
      expected_sum += x;
      expected_lo = x < expected_lo ? x : expected_lo;
      expected_hi = x > expected_hi ? x : expected_hi;
    }
    CHECK(lo.value() == expected_lo);
    CHECK(hi.value() == expected_hi);
    CHECK(sum.value() == doctest::Approx(expected_sum).epsilon(1e-14));

    exec.gather(degree.core());
    for (int cell = 0; cell < n; ++cell) CHECK(degree.host_read()[cell] == (cell == 0 || cell == n - 1 ? 1.0 : 2.0));
  }
}

TEST_CASE("ranks: a loop over a set the partition lacks is an error naming the set") {
  Chain c(9);
  const Partition part(Communicator::world(), c.cells, {c.cells}, {}, PartitionMethod::Block);
  RankExecutor exec(part);
  auto read = par_loop("read", SumOfEnds{}, c.edges, arg(c.a, c.ecell, 0, Access::Read),
                       arg(c.a, c.ecell, 1, Access::Read), arg(c.s, Access::Write));
  CHECK_THROWS_WITH_AS(exec.run(read), doctest::Contains("set 'edges' is not partitioned"), Error);
}

TEST_CASE("ranks: the one-rank executors refuse a dat a RankExecutor left stale, and run after gather()") {
  Chain c(23);
  std::vector<double> index(23);
  for (int i = 0; i < 23; ++i) index[static_cast<std::size_t>(i)] = i;
  Dat<double, 1> cell_index("index", c.cells, index);
  const Partition part(Communicator::world(), c.cells, {c.cells, c.edges}, {c.ecell});
  RankExecutor exec(part);
  auto write =
      par_loop("write", SetToIndexPlusOne{2.0}, c.cells, arg(cell_index, Access::Read), arg(c.a, Access::Write));
  auto read = par_loop("read", SumOfEnds{}, c.edges, arg(c.a, c.ecell, 0, Access::Read),
                       arg(c.a, c.ecell, 1, Access::Read), arg(c.s, Access::Write));
  exec.run(write);
  SequentialExecutor sequential;
  DirectExecutor direct;
  if (part.size() > 1) {
    CHECK_THROWS_WITH_AS(sequential.run(read), doctest::Contains("dat 'a' holds stale values"), Error);
    CHECK_THROWS_WITH_AS(direct.run(read), doctest::Contains("call its gather()"), Error);
  }
  exec.gather(c.a.core());
  direct.run(read);
  const double* s = c.s.host_read();
  for (int e = 0; e < 22; ++e) CHECK(s[e] == (e + 2.0) + (e + 3.0));
}

TEST_CASE("partition: METIS asked for without METIS is an error; blocks split evenly") {
  Chain c(10);
  if (!Partition::have_metis())
    CHECK_THROWS_WITH_AS(Partition(Communicator::world(), c.cells, {c.cells}, {}, PartitionMethod::Metis),
                         doctest::Contains("install libmetis-dev"), Error);
  const std::vector<int> owner = mesh::detail::block_partition(10, 3);
  CHECK(owner == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 2, 2, 2});
}

TEST_CASE("partition: cells no map links are split in blocks whatever the method") {
  Chain c(12);
  const Partition part(Communicator::world(), c.cells, {c.cells, c.edges}, {}, PartitionMethod::Automatic);
  CHECK(part.method() == "block");
  CHECK(part.of(c.cells).owner == mesh::detail::block_partition(12, part.size()));
}
