// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Configuration::from_json on hostile input: numbers outside their C++ types, deep nesting, huge
// values, duplicated keys; and fixed-fraction weights at the ends of double's range.
#include "test_error_support.hpp"

#include <korch/configuration.hpp>
#include <korch/distributor.hpp>
#include <korch/grid.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace korch;
using korch::test::error_of;

namespace {

// A valid configuration with `team` as its one team's fields and `helpers` as its helpers array.
std::string with_team(const std::string& team, const std::string& helpers = "[]") {
  return R"({"name": "x", "teams": [{"name": "t", "type": "tile", "action": "A")" + team +
         "}], \"helpers\": " + helpers +
         R"(, "distributor": {"kind": "action_parallel", "groups": [{"pipelines": ["t"]}]}})";
}

std::string aggregator_with(const std::string& variables) {
  return R"([{"name": "h", "kind": "aggregator", "input": "block", "output": "packet_of_blocks", "variables": )" +
         variables + "}]";
}

void rejects(const std::string& text, const std::string& fragment) {
  CAPTURE(fragment);
  CHECK_THROWS_WITH_AS(Configuration::from_json(text), doctest::Contains(fragment.c_str()), Error);
}

}  // namespace

TEST_CASE("Configuration input: an integer outside its field's C++ type is an error naming the field") {
  rejects(with_team(R"(, "threads": 4294967297)"), "field teams[0].threads: 4294967297 is out of range");
  rejects(with_team(R"(, "threads": -1)"), "field teams[0].threads");
  rejects(with_team(R"(, "threads": 2.5)"), "field teams[0].threads: expected an unsigned integer");
  rejects(with_team("", aggregator_with(R"({"copy_in_out": [5000000000]})")),
          "field helpers[0].variables.copy_in_out[0]: 5000000000 is out of range");
  rejects(with_team("", aggregator_with(R"({"copy_in": [-3]})")), "field helpers[0].variables.copy_in[0]");
  rejects(with_team("", aggregator_with(R"({"scratch": 3000000000})")),
          "field helpers[0].variables.scratch: 3000000000 is out of range");
  // The largest values of the types still read back as given.
  const auto c = Configuration::from_json(
      with_team(R"(, "threads": 4294967295)", aggregator_with(R"({"copy_out": [2147483647], "scratch": 2147483647})")));
  CHECK(c.teams[0].initial_threads == 4294967295u);
  CHECK(c.helpers[0].variables.copy_out == std::vector<int>{2147483647});
  CHECK(c.helpers[0].variables.scratch == 2147483647);
}

TEST_CASE("Configuration input: a number beyond double's range is a korch::Error naming the field") {
  rejects(with_team(R"(, "threads": 1e400)"), "field teams[0].threads");
  rejects(
      R"({"name": "x", "teams": [], "distributor": {"kind": "data_parallel", "groups": [{"pipelines": ["t"], "weights": [1, -1e400]}]}})",
      "field distributor.groups[0].weights[1]");
}

TEST_CASE("Configuration input: nesting deeper than the limit stops the parse with an error, without a crash") {
  for (const std::size_t depth : {std::size_t{65}, std::size_t{100000}}) {
    CAPTURE(depth);
    const std::string deep = std::string(depth, '[') + std::string(depth, ']');
    rejects(with_team(R"(, "threads": )" + deep), "nested deeper than");
    rejects(deep, "nested deeper than");
    const std::string unclosed = R"({"name": )" + std::string(depth, '[');
    rejects(unclosed, "nested deeper than");
    // The path of the deepest value keeps its start and end and stays short.
    const std::string message = error_of([&] { Configuration::from_json(with_team(R"(, "threads": )" + deep)); });
    CHECK(message.find("field teams[0].threads[0][0]") != std::string::npos);
    CHECK(message.size() < 400);
  }
  // The limit leaves room for every real configuration: 60 levels still parse (and fail on type).
  rejects(with_team(R"(, "threads": )" + std::string(60, '[') + std::string(60, ']')), "expected an unsigned integer");
}

TEST_CASE("Configuration input: a quoted value in a message is a short excerpt, however large the value") {
  std::string big = "[";
  for (int i = 0; i < 1000000; ++i) big += (i ? ",12345678901" : "12345678901");
  big += "]";
  const std::string message = error_of([&] { Configuration::from_json(with_team(R"(, "threads": )" + big)); });
  CHECK(message.find("field teams[0].threads: expected an unsigned integer") != std::string::npos);
  CHECK(message.find("1000000 elements") != std::string::npos);
  CHECK(message.size() < 400);
  const std::string long_name(5000000, 'n');
  const std::string named =
      error_of([&] { Configuration::from_json(with_team(R"(, "threads": ")" + long_name + "\"")); });
  CHECK(named.find("field teams[0].threads") != std::string::npos);
  CHECK(named.size() < 400);
  // A misspelt key or an unknown word of that size is cut the same way.
  const std::string key = error_of([&] { Configuration::from_json(with_team(", \"" + long_name + "\": 1")); });
  CHECK(key.find("unknown field") != std::string::npos);
  CHECK(key.size() < 400);
  const std::string word = error_of([&] {
    Configuration::from_json(R"({"name": "x", "teams": [{"name": "t", "type": ")" + long_name +
                             R"(", "action": "A"}]})");
  });
  CHECK(word.find("field teams[0].type: unknown data type") != std::string::npos);
  CHECK(word.size() < 400);
}

TEST_CASE("Configuration input: the path of a value under many long keys is cut in the middle") {
  // Found by the configuration fuzz target: the message quoted every key of the path in full.
  std::string text, close;
  for (int level = 0; level < 25; ++level) {  // 50 levels of nesting, under the limit
    text += "{\"" + std::string(100, static_cast<char>('a' + level % 26)) + "\": [";
    close = "]}" + close;
  }
  const std::string message = error_of([&] { Configuration::from_json(text + "nope" + close); });
  CHECK(message.find("not valid JSON") != std::string::npos);
  CHECK(message.find(std::string(60, 'a') + "... (100 bytes)[0]") != std::string::npos);
  CHECK(message.size() < 600);
}

TEST_CASE("Configuration input: a key given twice in one object is an error naming the key") {
  rejects(with_team(R"(, "threads": 1, "threads": 2)"), "field teams[0].threads: given twice");
  rejects(R"({"name": "x", "name": "y", "teams": []})", "field name: given twice");
  // The same key in two different objects is fine.
  CHECK_NOTHROW(Configuration::from_json(
      R"({"name": "x", "teams": [{"name": "a", "type": "tile", "action": "A"}, {"name": "b", "type": "tile", "action": "A"}],
          "distributor": {"kind": "action_parallel", "groups": [{"pipelines": ["a"]}, {"pipelines": ["b"]}]}})"));
}

TEST_CASE("Configuration input: fixed-fraction weights near double's limits split the blocks by their ratio") {
  GridSpec spec;
  spec.block_cells = {4, 4, 1};
  spec.blocks = {8, 8, 1};
  spec.guard_dims = 2;
  Grid grid(spec);
  for (const std::vector<double>& weights : {std::vector<double>{1e308, 1e308}, std::vector<double>{1.7e308, 1.7e308},
                                             std::vector<double>{4e-320, 4e-320}}) {
    CAPTURE(weights[0]);
    std::vector<int> count(2, 0);
    auto push = [&count](int i) {
      return [&count, i](std::shared_ptr<DataItem>) { ++count[static_cast<std::size_t>(i)]; };
    };
    DataParallelDistributor d({DistributorTarget{"a", DataType::block, push(0), {}, {}},
                               DistributorTarget{"b", DataType::block, push(1), {}, {}}},
                              DistributionPolicy::fixed_fraction, weights);
    d.distribute(grid);
    CHECK(count[0] == 32);
    CHECK(count[1] == 32);
  }
}
