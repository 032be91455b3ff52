// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The dataflow graph compiler: region numbering on hand-made graphs (the design's two rules) and
// the errors that name what to fix in a graph it cannot compile.
#include <doctest/doctest.h>

#include <korch/dataflow.hpp>
#include <korch/error.hpp>

#include "test_dataflow_graphs.hpp"
#include "test_error_support.hpp"

#include <string>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_dataflow_compiler {

namespace df = korch::dataflow;
using korch::test::error_of;
using test_dataflow_graphs::ints;
using test_dataflow_graphs::label;
using test_dataflow_graphs::number;
using test_dataflow_graphs::opts;
using test_dataflow_graphs::Pass;
using test_dataflow_graphs::Range;
using test_dataflow_graphs::Split;
using test_dataflow_graphs::Sum;
using test_dataflow_graphs::ToDouble;

TEST_CASE("Regions: a region contained in another gets a higher number") {
  auto d = ints(10, 1);
  auto g = df::graph("nested")
               .source("in", df::from_view(d))
               .enumerate("e1", Range{}, "in")
               .enumerate("e2", Range{}, "e1")
               .aggregate("a2", Sum{}, "e2", "e2")
               .aggregate("a1", Sum{}, "a2", "e1")
               .sink<int>("out", "a1", 100)
               .compile();
  CHECK(number(g, "e1") == 1);
  CHECK(number(g, "e2") == 2);
  CHECK(label(g, "in") == 0);
  CHECK(label(g, "e1") == 1);
  CHECK(label(g, "e2") == 2);
  CHECK(label(g, "a2") == 2);
  CHECK(label(g, "a1") == 1);
  CHECK(label(g, "out") == 0);
}

TEST_CASE(
    "Regions: a region disjoint from one whose head precedes it gets a lower number (the "
    "seed's FIXME rule), so the upstream region's flush stops at its terminal") {
  auto d = ints(10, 1);
  auto g = df::graph("sequence")
               .source("in", df::from_view(d))
               .enumerate("e1", Range{}, "in")
               .aggregate("a1", Sum{}, "e1", "e1")
               .node("mid", Pass{}, "a1")
               .enumerate("e2", Range{}, "mid")
               .aggregate("a2", Sum{}, "e2", "e2")
               .sink<int>("out", "a2", 100)
               .compile();
  CHECK(number(g, "e2") < number(g, "e1"));
  CHECK(number(g, "e2") >= 1);
  CHECK(label(g, "mid") == 0);
  // directly adjacent: e2 heads right after a1
  auto h = df::graph("adjacent")
               .source("in", df::from_view(d))
               .enumerate("e1", Range{}, "in")
               .aggregate("a1", Sum{}, "e1", "e1")
               .enumerate("e2", Range{}, "a1")
               .aggregate("a2", Sum{}, "e2", "e2")
               .sink<int>("out", "a2", 100)
               .compile();
  CHECK(number(h, "e2") == 1);
  CHECK(number(h, "e1") == 2);
  CHECK(label(h, "a1") == 2);
  CHECK(label(h, "e2") == 1);
}

TEST_CASE("Regions: two sequential regions nested in a third satisfy both rules") {
  auto d = ints(10, 1);
  auto g = df::graph("siblings")
               .source("in", df::from_view(d))
               .enumerate("e1", Range{}, "in")
               .enumerate("e2", Range{}, "e1")
               .aggregate("a2", Sum{}, "e2", "e2")
               .enumerate("e3", Range{}, "a2")
               .aggregate("a3", Sum{}, "e3", "e3")
               .aggregate("a1", Sum{}, "a3", "e1")
               .sink<int>("out", "a1", 100)
               .compile();
  const int n1 = number(g, "e1"), n2 = number(g, "e2"), n3 = number(g, "e3");
  CHECK(n1 < n2);
  CHECK(n1 < n3);
  CHECK(n3 < n2);
  CHECK(g.regions[n1].terminals == std::vector<int>{g.index_of("a1")});
  CHECK(g.regions[n2].members.size() == 2);  // e2, a2
}

TEST_CASE("Regions: a region reaching two sinks through a router has two terminal nodes") {
  auto d = ints(10, 1);
  auto g = df::graph("branches")
               .source("in", df::from_view(d))
               .enumerate("e1", Range{}, "in")
               .node("split", Split{}, "e1", {"odd", "even"})
               .sink<int>("odd", "split.odd", 100)
               .sink<int>("even", "split.even", 100)
               .compile();
  CHECK(g.regions[1].terminals.size() == 2);
  CHECK(label(g, "odd") == 1);
}

TEST_CASE("Regions: overlapping regions are rejected with an error naming both") {
  auto d = ints(10, 1);
  const std::string e = error_of([&] {
    df::graph("overlap")
        .source("in", df::from_view(d))
        .enumerate("e1", Range{}, "in")
        .enumerate("e2", Range{}, "e1")
        .aggregate("a1", Sum{}, "e2", "e1")
        .aggregate("a2", Sum{}, "a1", "e2")
        .sink<int>("out", "a2", 100)
        .compile();
  });
  CHECK(e.find("overlap") != std::string::npos);
  CHECK(e.find("'e1'") != std::string::npos);
  CHECK(e.find("'e2'") != std::string::npos);
}

TEST_CASE("Graph compiler: invalid graphs are rejected with errors that name the fix") {
  auto d = ints(10, 1);
  auto src = df::graph("bad").source("in", df::from_view(d));
  CHECK(error_of([&] {
          src.enumerate("e1", Range{}, "in")
              .aggregate("a1", Sum{}, "e1", "e1")
              .aggregate("a1b", Sum{}, "a1", "e1")
              .sink<int>("out", "a1b", 1)
              .compile();
        }).find("not inside") != std::string::npos);
  CHECK(error_of([&] {
          src.node("p", Pass{}, "in").aggregate("a", Sum{}, "p", "p").sink<int>("o", "a", 1).compile();
        }).find("not an enumerate node") != std::string::npos);
  CHECK(error_of([&] {
          src.node("p", ToDouble{}, "in").node("q", Pass{}, "p").sink<int>("o", "q", 1).compile();
        }).find("make the types equal") != std::string::npos);
  CHECK(error_of([&] { src.node("s", Split{}, "in").sink<int>("o", "s.out0", 1).compile(); }).find("not connected") !=
        std::string::npos);
  CHECK(error_of([&] { src.node("s", Split{}, "in").sink<int>("o", "s", 1).compile(); }).find("name one") !=
        std::string::npos);
  CHECK(error_of([&] {
          src.node("p", Pass{}, "in").sink<int>("o", "p", 1).sink<int>("o2", "p", 1).compile();
        }).find("already feeds") != std::string::npos);
  CHECK(error_of([&] { src.sink<int>("o", "nowhere", 1).compile(); }).find("not a node defined before it") !=
        std::string::npos);
  CHECK(error_of([&] { src.sink<int>("in", "in", 1).compile(); }).find("two nodes are named") != std::string::npos);
  CHECK(error_of([&] { df::graph("nosource").sink<int>("o", "x", 1).compile(); }).find("must be the source") !=
        std::string::npos);
  CHECK(error_of([&] { df::make_pipeline(src.sink<int>("o", "in", 10), opts(4, 0.5, 1)); }).find("below the minimum") !=
        std::string::npos);
}

}  // namespace test_dataflow_compiler
