// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Built-in configurations used with a bundle's own action names: slots bound by position or by
// slot, optional slots left out, the binding's errors, and the drawings of docs/configurations.md.
#include "test_error_support.hpp"
#include "test_runtime_support.hpp"

#include <korch/configurations/builtin.hpp>
#include <korch/configurations/drawing.hpp>
#include <korch/runtime.hpp>

#include <map>
#include <set>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_configuration_binding {

using namespace korch;
using namespace korch::test;

namespace {

GridSpec small_grid() {
  GridSpec s;
  s.block_cells = {8, 8, 4};
  s.blocks = {2, 2, 1};
  s.guard = 1;
  s.n_vars = 3;
  s.tile_cells = {4, 4, 4};
  return s;
}

// The slots' actions with the built-ins' variable convention (A writes 0, B writes 1, C writes 2;
// a later slot reads what the one before it wrote), as runtime tests use them.
const Affine A{"A", 0, 0, 2.0, 0.0, 1.0};
const Affine B_indep{"B", 1, 1, 3.0, 0.0, -1.0};
const Affine B_dep{"B", 1, 0, 1.0, 1.0, 0.0};
const Affine C_indep{"C", 2, 2, 0.5, 0.0, 2.0};
const Affine C_dep{"C", 2, 1, 1.0, 1.0, 0.0};

// Each built-in's actions, slot by slot, in an order valid for the sequential reference.
std::map<std::string, std::vector<Affine>> slot_actions() {
  return {{"cpu_only", {A}},
          {"gpu_only", {A}},
          {"gpu_internal", {A}},
          {"cpu_gpu_action_parallel", {A, B_indep}},
          {"cpu_gpu_data_parallel", {A}},
          {"hybrid_distributor", {A, B_indep}},
          {"data_parallel_accumulator", {A, B_dep}},
          {"mashup", {A, B_dep, C_indep}},
          {"concurrent_itor", {A, B_indep, C_dep}},
          {"split_itor", {A, B_dep}},
          {"big_example", {A, B_dep, C_dep}}};
}

const std::map<std::string, std::string> user_names = {{"A", "advect"}, {"B", "diffuse"}, {"C", "react"}};

std::vector<Affine> renamed(std::vector<Affine> actions) {
  for (auto& a : actions) a.name = user_names.at(a.name);
  return actions;
}

Bundle bundle_of(const std::vector<Affine>& actions) {
  Bundle b("user bundle");
  for (const auto& a : actions) b.add(affine_routine(a, nullptr));
  return b;
}

Grid run(Runtime& rt, const std::vector<Affine>& actions, const Configuration& c) {
  Grid grid(small_grid());
  fill_pattern(grid);
  rt.execute(bundle_of(actions), c, grid);
  return grid;
}

Grid reference(const std::vector<Affine>& actions) {
  Grid grid(small_grid());
  fill_pattern(grid);
  apply_reference(grid, actions);
  return grid;
}

std::set<int> carried_variables(const Configuration& c) {
  std::set<int> vars;
  for (const auto& h : c.helpers)
    for (const auto* v : {&h.variables.copy_in, &h.variables.copy_in_out, &h.variables.copy_out})
      vars.insert(v->begin(), v->end());
  return vars;
}

void check_same_shape(const Configuration& bound, const Configuration& original) {
  REQUIRE(bound.teams.size() == original.teams.size());
  Configuration back = bound;
  for (std::size_t i = 0; i < bound.teams.size(); ++i) {
    CHECK(bound.teams[i].action == user_names.at(original.teams[i].action));
    back.teams[i].action = original.teams[i].action;
  }
  // Everything else (teams, helpers and the variables their packets carry, edges) stays as it is.
  CHECK(back.to_json() == original.to_json());
}

}  // namespace

TEST_CASE(
    "Built-in slots: every built-in lists its slots A, B, C in order, each described; only post-processing slots are "
    "optional") {
  const std::set<std::pair<std::string, std::string>> optional = {{"split_itor", "B"}, {"concurrent_itor", "C"}};
  for (const auto& name : configurations::names()) {
    INFO(name);
    const auto slots = configurations::slots(name);
    REQUIRE(slots.size() == slot_actions().at(name).size());
    for (std::size_t i = 0; i < slots.size(); ++i) {
      INFO("slot " << slots[i].name);
      CHECK(slots[i].name == std::string(1, static_cast<char>('A' + i)));
      CHECK(!slots[i].description.empty());
      CHECK(!slots[i].teams.empty());
      CHECK(slots[i].optional == (optional.count({name, slots[i].name}) == 1));
      for (const auto& team : slots[i].teams) CHECK(configurations::get(name).find_team(team)->action == slots[i].name);
    }
  }
  CHECK(configurations::slots("split_itor")[0].teams == std::vector<std::string>{"cpu", "gpu"});
  CHECK(configurations::slots("split_itor")[1].teams == std::vector<std::string>{"post"});
  CHECK_THROWS_WITH_AS(configurations::slots("nope"), doctest::Contains("cpu_only"), Error);
}

TEST_CASE(
    "Built-in binding: bound by position, every built-in runs the bundle's own names with the result of A, B, C") {
  Runtime rt;
  for (const auto& entry : slot_actions()) {
    const std::string& name = entry.first;  // not a structured binding: INFO captures it in a lambda
    const auto& actions = entry.second;
    INFO(name);
    std::vector<std::string> names;
    for (const auto& a : renamed(actions)) names.push_back(a.name);
    const Configuration bound = configurations::get(name, names);
    check_same_shape(bound, configurations::get(name));
    const Grid with_slots = run(rt, actions, configurations::get(name));
    const Grid with_names = run(rt, renamed(actions), bound);
    CHECK(with_names.max_interior_difference(with_slots) == 0.0);
    if (name != "gpu_internal") CHECK(with_names.max_interior_difference(reference(actions)) == 0.0);
    CHECK(rt.pinned_pool().outstanding_bytes() == 0);
    CHECK(rt.device_pool().outstanding_bytes() == 0);
  }
}

TEST_CASE("Built-in binding: bound by slot, every built-in runs the bundle's own names with the result of A, B, C") {
  Runtime rt;
  for (const auto& entry : slot_actions()) {
    const std::string& name = entry.first;  // not a structured binding: INFO captures it in a lambda
    const auto& actions = entry.second;
    INFO(name);
    std::map<std::string, std::string> by_slot;
    for (const auto& a : actions) by_slot[a.name] = user_names.at(a.name);
    const Configuration bound = configurations::get(name, by_slot);
    check_same_shape(bound, configurations::get(name));
    CHECK(run(rt, renamed(actions), bound).max_interior_difference(run(rt, actions, configurations::get(name))) == 0.0);
  }
}

TEST_CASE("Built-in binding: braces read as names by position, pairs as slot and action") {
  const ActionBinding by_position{"advect", "diffuse"};
  CHECK(by_position.by_position());
  CHECK(by_position.names() == std::vector<std::string>{"advect", "diffuse"});
  const ActionBinding by_slot{{"B", "diffuse"}, {"A", "advect"}};
  CHECK_FALSE(by_slot.by_position());
  REQUIRE(by_slot.pairs().size() == 2);
  CHECK(by_slot.pairs()[0].slot == "B");
  CHECK(by_slot.pairs()[0].action == "diffuse");
  const auto c = configurations::get("cpu_gpu_action_parallel", {{"B", "diffuse"}, {"A", "advect"}});
  CHECK(c.find_team("cpu")->action == "advect");
  CHECK(c.find_team("gpu")->action == "diffuse");
  const std::string mine = "mine";
  CHECK(configurations::get("cpu_only", {mine}).teams[0].action == "mine");
}

TEST_CASE(
    "Built-in binding: an optional slot left unbound drops its team; the rest runs with the result of its own "
    "actions") {
  Runtime rt;
  SUBCASE("split_itor without B: the post team is gone and the device packets are only unpacked") {
    const Configuration c = configurations::get("split_itor", {{"A", "advect"}});
    CHECK(c.find_team("post") == nullptr);
    CHECK(c.find_helper("from_gpu")->kind == HelperKind::mover_unpacker);
    CHECK(c.find_helper("from_gpu")->output == DataType::packet_of_blocks);
    CHECK(c.threads.empty());
    for (const auto& e : c.work) CHECK(e.to != "post");
    CHECK(c.to_json() == configurations::get("split_itor", {"advect"}).to_json());
    CHECK(run(rt, renamed({A}), c).max_interior_difference(reference({A})) == 0.0);
    CHECK_FALSE(carried_variables(c).count(1));  // nothing carries what only B would write
  }
  SUBCASE("concurrent_itor without C") {
    const Configuration c = configurations::get("concurrent_itor", {"advect", "diffuse"});
    CHECK(c.teams.size() == 2);
    CHECK(c.find_team("post") == nullptr);
    CHECK(run(rt, renamed({A, B_indep}), c).max_interior_difference(reference({A, B_indep})) == 0.0);
    CHECK_FALSE(carried_variables(c).count(2));
  }
}

TEST_CASE("Built-in binding: a slot keeps the variables its helpers carry, whatever its action is called") {
  for (const auto& name : configurations::names()) {
    INFO(name);
    const auto original = configurations::get(name);
    std::map<std::string, std::string> all;
    for (const auto& s : original.slots()) all[s.name] = user_names.at(s.name);
    const auto bound = configurations::get(name, all);
    REQUIRE(bound.helpers.size() == original.helpers.size());
    for (std::size_t i = 0; i < bound.helpers.size(); ++i) {
      CHECK(bound.helpers[i].variables.copy_in == original.helpers[i].variables.copy_in);
      CHECK(bound.helpers[i].variables.copy_in_out == original.helpers[i].variables.copy_in_out);
      CHECK(bound.helpers[i].variables.copy_out == original.helpers[i].variables.copy_out);
    }
    CHECK_NOTHROW(validate(bound, RuntimeShape{6, 4, 6, 2}));
  }
}

TEST_CASE("Configuration binding: any configuration binds its own action names, and a bound one binds again") {
  const auto c = Configuration::from_json(R"({"name": "mine",
    "teams": [{"name": "first", "type": "tile", "action": "step1", "threads": 1},
              {"name": "second", "type": "tile", "action": "step2", "threads": 1}],
    "work": [{"from": "first", "to": "second"}],
    "distributor": {"kind": "action_parallel", "groups": [{"pipelines": ["first"]}]}})");
  const auto slots = c.slots();
  REQUIRE(slots.size() == 2);
  CHECK(slots[0].name == "step1");
  CHECK(slots[1].name == "step2");
  CHECK_FALSE(slots[0].optional);
  CHECK(slots[1].optional);  // ends a pipeline its first team starts
  CHECK(slots[0].description.empty());
  const auto bound = c.bind_actions({"advect", "diffuse"});
  CHECK(bound.find_team("second")->action == "diffuse");
  const auto again = bound.bind_actions({{"diffuse", "smooth"}, {"advect", "advect"}});
  CHECK(again.find_team("first")->action == "advect");
  CHECK(again.find_team("second")->action == "smooth");
  // Swapping two names is one step, not two renames in a row.
  const auto swapped = bound.bind_actions({"diffuse", "advect"});
  CHECK(swapped.find_team("first")->action == "diffuse");
  CHECK(swapped.find_team("second")->action == "advect");
  const auto first_only = c.bind_actions({"advect"});
  CHECK(first_only.teams.size() == 1);
  CHECK(first_only.work.empty());
  CHECK_NOTHROW(validate(first_only, RuntimeShape{6, 4, 6, 2}));
}

TEST_CASE("Built-in binding errors name the configuration, the slot and the fix") {
  const auto fails = [](const std::string& name, const ActionBinding& b, const std::vector<std::string>& parts) {
    const std::string message = error_of([&] { configurations::get(name, b); });
    INFO(message);
    REQUIRE(!message.empty());
    CHECK(contains(message, "configuration '" + name + "'"));
    for (const auto& p : parts) CHECK(contains(message, p));
  };
  // an unknown slot
  fails("split_itor", {{"C", "advect"}}, {"no slot 'C'", "'advect'", "A, B (optional)", "bind one of those"});
  // more names than slots
  fails("cpu_only", {"advect", "diffuse"}, {"1 slot (A)", "2 action names", "give at most 1"});
  fails("big_example", {"a", "b", "c", "d"}, {"3 slots (A, B, C)", "4 action names"});
  // a slot given twice
  fails("cpu_gpu_action_parallel", {{"A", "advect"}, {"A", "diffuse"}},
        {"slot 'A' is bound twice", "'advect'", "'diffuse'", "bind each slot once"});
  // one name for two slots: action parallel (it would run twice on every item) and in sequence alike
  fails("cpu_gpu_action_parallel", {"advect", "advect"},
        {"action 'advect' is bound to slots 'A' and 'B'", "bind 'B' to another routine"});
  fails("split_itor", {{"A", "advect"}, {"B", "advect"}}, {"slots 'A' and 'B'"});
  // an empty name
  fails("cpu_only", {""}, {"slot 'A' is bound to an empty action name"});
  fails("split_itor", {{"A", "advect"}, {"B", ""}}, {"slot 'B'", "leave the slot out (it is optional)"});
  // a required slot left unbound, by position and by slot
  fails("cpu_gpu_action_parallel", {"advect"},
        {"slot 'B' (team 'gpu') is left unbound", "bind an action to 'B'", "one name for each slot up to it"});
  fails("split_itor", {{"B", "post"}}, {"slot 'A' (teams 'cpu', 'gpu') is left unbound"});
  fails("mashup", ActionBinding{}, {"slot 'A'"});
  // an unknown built-in still lists the names
  CHECK_THROWS_WITH_AS(configurations::get("nope", {"advect"}), doctest::Contains("use one of cpu_only"), Error);
}

TEST_CASE("Built-in drawings: every built-in draws each node, its edges and the bound action names") {
  for (const auto& name : configurations::names()) {
    INFO(name);
    std::map<std::string, std::string> all;
    for (const auto& s : configurations::slots(name)) all[s.name] = user_names.at(s.name);
    const auto c = configurations::get(name, all);
    const std::string dot = configurations::to_dot(c);
    CHECK(contains(dot, "digraph \"" + name + "\""));
    for (const auto& t : c.teams) CHECK(contains(dot, "\"" + t.name + "\" [shape=box"));
    for (const auto& t : c.teams) CHECK(contains(dot, "action " + t.action));
    for (const auto& h : c.helpers) CHECK(contains(dot, "\"" + h.name + "\" [shape="));
    for (const auto& e : c.all_work_edges()) CHECK(contains(dot, "\"" + e.from + "\" -> \"" + e.to + "\""));
    for (const auto& e : c.threads) CHECK(contains(dot, "\"" + e.from + "\" -> \"" + e.to + "\" [style=dashed"));
  }
  CHECK(contains(configurations::to_dot(configurations::get("cpu_gpu_action_parallel")), "carries in-out 1"));
  Configuration odd = configurations::get("cpu_only");
  odd.teams[0].name = "say \"hi\"";
  CHECK(contains(configurations::to_dot(odd), "\"say \\\"hi\\\"\" [shape=box"));
}

TEST_CASE(
    "Built-in sizes: every built-in, bound or not, fits a runtime of 4 teams of 3 threads and 6 helper teams of 1 "
    "thread") {
  for (const auto& name : configurations::names()) {
    INFO(name);
    CHECK_NOTHROW(validate(configurations::get(name), RuntimeShape{4, 3, 6, 1}));
  }
  CHECK_NOTHROW(validate(configurations::get("split_itor", {"advect"}), RuntimeShape{4, 3, 6, 1}));
  CHECK_NOTHROW(validate(configurations::get("concurrent_itor", {"advect", "diffuse"}), RuntimeShape{4, 3, 6, 1}));
}

}  // namespace test_configuration_binding
