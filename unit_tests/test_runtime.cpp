// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runtime::execute with every built-in configuration, random bundles, errors, JSON, trace and
// record/replay.
#include "test_runtime_support.hpp"

#include <korch/configurations/builtin.hpp>
#include <korch/runtime.hpp>

#include <random>
#include <set>
#include <stdexcept>

using namespace korch;
using namespace korch::test;

namespace {

GridSpec spec(std::array<int, 3> blocks = {3, 2, 2}, std::array<int, 3> tile = {4, 4, 4}) {
  GridSpec s;
  s.block_cells = {8, 8, 8};
  s.blocks = blocks;
  s.guard = 1;
  s.n_vars = 3;
  s.tile_cells = tile;
  return s;
}

const Affine A{"A", 0, 0, 2.0, 0.0, 1.0};         // v0 = 2 v0 + 1
const Affine B_indep{"B", 1, 1, 3.0, 0.0, -1.0};  // v1 = 3 v1 - 1
const Affine B_dep{"B", 1, 0, 1.0, 1.0, 0.0};     // v1 = v1 + v0 (after A)
const Affine C_indep{"C", 2, 2, 0.5, 0.0, 2.0};   // v2 = 0.5 v2 + 2
const Affine C_dep{"C", 2, 1, 1.0, 1.0, 0.0};     // v2 = v2 + v1 (after B)

struct Case {
  std::string config;
  std::vector<Affine> actions;  // in an order valid for the reference
  std::vector<std::pair<std::string, std::string>> order;
};

std::vector<Case> cases() {
  return {
      {"cpu_only", {A}, {}},
      {"gpu_only", {A}, {}},
      {"cpu_gpu_action_parallel", {A, B_indep}, {}},
      {"cpu_gpu_data_parallel", {A}, {}},
      {"hybrid_distributor", {A, B_indep}, {}},
      {"data_parallel_accumulator", {A, B_dep}, {{"A", "B"}}},
      {"mashup", {A, B_dep, C_indep}, {{"A", "B"}}},
      {"concurrent_itor", {A, B_indep, C_dep}, {{"B", "C"}}},
      // Tile pipelines order A before B tile by tile, not block by block: the results (B reads what
      // A writes) check that order.
      {"split_itor", {A, B_dep}, {}},
      {"big_example", {A, B_dep, C_dep}, {{"B", "C"}}},
  };
}

Bundle bundle_of(const std::vector<Affine>& actions, ActionLog* log) {
  Bundle b("test bundle");
  for (const auto& a : actions) b.add(affine_routine(a, log));
  return b;
}

std::vector<std::string> names_of(const std::vector<Affine>& actions) {
  std::vector<std::string> n;
  for (const auto& a : actions) n.push_back(a.name);
  return n;
}

void run_case(Runtime& rt, const Case& c, const GridSpec& s) {
  INFO("configuration " << c.config);
  Grid grid(s);
  fill_pattern(grid);
  Grid reference = grid.clone();
  apply_reference(reference, c.actions);
  ActionLog log;
  rt.execute(bundle_of(c.actions, &log), configurations::get(c.config), grid);
  check_log(log, grid, names_of(c.actions), c.order);
  CHECK(grid.max_interior_difference(reference) == 0.0);
  CHECK(rt.pinned_pool().outstanding_bytes() == 0);
  CHECK(rt.device_pool().outstanding_bytes() == 0);
}

}  // namespace

TEST_CASE(
    "Runtime: every built-in configuration applies each action to each item exactly once, in pipeline order, "
    "with the sequential result") {
  Runtime rt;
  for (const auto& c : cases()) run_case(rt, c, spec());
  CHECK(rt.device_pool().high_water_bytes() > 0);
}

TEST_CASE("Runtime: grid results are identical across the configurations that apply A") {
  Runtime rt;
  std::vector<std::unique_ptr<Grid>> results;
  for (const char* name : {"cpu_only", "gpu_only", "cpu_gpu_data_parallel"}) {
    auto g = std::make_unique<Grid>(spec());
    fill_pattern(*g);
    rt.execute(bundle_of({A}, nullptr), configurations::get(name), *g);
    results.push_back(std::move(g));
  }
  CHECK(results[0]->max_interior_difference(*results[1]) == 0.0);
  CHECK(results[0]->max_interior_difference(*results[2]) == 0.0);
}

TEST_CASE("Runtime: the GPU-internal configuration gives each block's action metadata to the team once") {
  Runtime rt;
  Grid grid(spec());
  ActionLog log;
  rt.execute(bundle_of({A}, &log), configurations::get("gpu_internal"), grid);
  check_log(log, grid, {"A"}, {});
}

TEST_CASE("Runtime: data-parallel distribution splits blocks between the pipelines") {
  Runtime rt;
  Grid grid(spec({4, 2, 2}));
  rt.execute(bundle_of({A}, nullptr), configurations::get("cpu_gpu_data_parallel"), grid);
  const auto& d = rt.last_distribution();
  REQUIRE(d.size() == 2);
  CHECK(d[0].first == "cpu");
  CHECK(d[0].second == 8 * 8);  // 8 blocks x 8 tiles
  CHECK(d[1].second == 8);      // 8 blocks
}

TEST_CASE("Runtime: split_itor and big_example split the blocks between their host and device paths") {
  const auto enqueued = [](const Runtime& rt, const std::string& node) {
    for (const auto& r : rt.last_reports())
      if (r.node == node) return r.cycle.enqueued;
    return std::size_t{0};
  };
  Runtime rt;
  Grid grid(spec({4, 2, 2}));  // 16 blocks of 8 tiles
  rt.execute(bundle_of({A, B_dep}, nullptr), configurations::get("split_itor"), grid);
  REQUIRE(rt.last_distribution().size() == 2);
  CHECK(rt.last_distribution()[0].second == 8 * 8);  // 8 blocks as tiles to the host team
  CHECK(rt.last_distribution()[1].second == 8);      // 8 blocks to be packed for the device
  rt.execute(bundle_of({A, B_dep, C_dep}, nullptr), configurations::get("big_example"), grid);
  REQUIRE(rt.last_distribution().size() == 1);
  CHECK(rt.last_distribution()[0].second == 16 * 8);  // every tile to A on the host
  CHECK(enqueued(rt, "b_cpu") == 8 * 8);              // then half the blocks to B on the host
  CHECK(enqueued(rt, "to_b_gpu") == 8 * 8);           // and half packed for B on the device
}

TEST_CASE("Runtime: random bundles over random grids and configurations match the sequential reference") {
  Runtime rt;
  std::mt19937 rng(424242);
  std::uniform_real_distribution<double> coef(-1.5, 1.5);
  auto all = cases();
  for (int round = 0; round < 12; ++round) {
    Case c = all[static_cast<std::size_t>(rng() % all.size())];
    for (auto& a : c.actions) {  // same dependence structure, random coefficients
      a.a = coef(rng);
      a.b = a.in == a.out ? 0.0 : coef(rng);
      a.c = coef(rng);
    }
    GridSpec s =
        spec({1 + static_cast<int>(rng() % 3), 1 + static_cast<int>(rng() % 3), 1 + static_cast<int>(rng() % 2)},
             {static_cast<int>(rng() % 9), static_cast<int>(rng() % 9), static_cast<int>(rng() % 9)});
    s.block_cells = {4 + static_cast<int>(rng() % 5), 4 + static_cast<int>(rng() % 5), 2 + static_cast<int>(rng() % 4)};
    INFO("round " << round);
    run_case(rt, c, s);
  }
}

TEST_CASE(
    "Runtime: a throwing action fails the cycle with an error naming it; no hang, pools balance, runtime reusable") {
  Runtime rt;
  for (const char* name : {"cpu_only", "gpu_only", "data_parallel_accumulator", "concurrent_itor", "mashup"}) {
    INFO(name);
    Grid grid(spec());
    Bundle b("throwing");
    std::atomic<int> calls{0};
    for (const char* a : {"A", "B", "C"}) {
      b.add(ActionRoutine(a, [&calls, a](const ActionContext&, DataItem& item) {
        if (calls.fetch_add(1) == 3) throw std::runtime_error(std::string("boom in ") + a + " on " + item.describe());
      }));
    }
    Bundle used("throwing");
    const auto cfg = configurations::get(name);
    std::set<std::string> actions;
    for (const auto& t : cfg.teams) actions.insert(t.action);
    for (const auto& r : b.routines())
      if (actions.count(r.name())) used.add(r);
    CHECK_THROWS_WITH_AS(rt.execute(used, cfg, grid), doctest::Contains("boom in"), Error);
    CHECK(rt.pinned_pool().outstanding_bytes() == 0);
    CHECK(rt.device_pool().outstanding_bytes() == 0);
    for (unsigned i = 0; i < rt.options().n_teams; ++i) CHECK(rt.team(i).mode() == TeamMode::Idle);
  }
  run_case(rt, cases()[0], spec());
}

TEST_CASE("Runtime: a device pool limit below one packet fails the cycle with the pool's error; raising it recovers") {
  RuntimeOptions o;
  o.device_pool_limit = 4096;  // one packet of 8^3-cell blocks with 3 variables needs more
  Runtime rt(o);
  CHECK(rt.device_pool().limit_bytes() == 4096);
  Grid grid(spec());
  fill_pattern(grid);
  CHECK_THROWS_WITH_AS(rt.execute(bundle_of({A}, nullptr), configurations::get("gpu_only"), grid),
                       doctest::Contains("memory pool 'device' (device)"), Error);
  CHECK(rt.pinned_pool().outstanding_bytes() == 0);
  CHECK(rt.device_pool().outstanding_bytes() == 0);
  for (unsigned i = 0; i < rt.options().n_teams; ++i) CHECK(rt.team(i).mode() == TeamMode::Idle);
  rt.device_pool().set_limit_bytes(0);
  run_case(rt, cases()[1], spec());  // gpu_only, exact results
}

TEST_CASE("Runtime: one instance at a time; a bundle with more routines than teams is an error") {
  Runtime rt(RuntimeOptions{2, 2, 2, 1, {}, 0, 0});
  CHECK(Runtime::exists());
  CHECK_THROWS_WITH_AS(Runtime{}, doctest::Contains("one at a time"), Error);
  Bundle b;
  for (const char* a : {"A", "B", "C"}) b.add(ActionRoutine(a, [](const ActionContext&, DataItem&) {}));
  Grid grid(spec());
  CHECK_THROWS_WITH_AS(rt.execute(b, configurations::get("cpu_only"), grid), doctest::Contains("more teams"), Error);
}

namespace {
Configuration base() { return configurations::get("cpu_gpu_data_parallel"); }
void expect_invalid(const Configuration& c, const char* fragment) {
  CAPTURE(fragment);
  CHECK_THROWS_WITH_AS(validate(c, RuntimeShape{6, 4, 6, 2}), doctest::Contains(fragment), Error);
}
}  // namespace

TEST_CASE("Validation: each kind of bad configuration is rejected with an error naming the team or edge") {
  for (const auto& n : configurations::names())
    CHECK_NOTHROW(validate(configurations::get(n), RuntimeShape{6, 4, 6, 2}));
  {  // type mismatch along an edge
    auto c = base();
    c.work[0].to = "cpu";
    c.work.erase(c.work.begin() + 1);
    expect_invalid(c, "work edge 'to_gpu' -> 'cpu'");
  }
  {  // self-loop
    auto c = base();
    c.work.push_back({"cpu", "cpu"});
    expect_invalid(c, "'cpu' -> 'cpu' is a self-loop");
  }
  {  // thread self-loop
    auto c = base();
    c.threads.push_back({"gpu", "gpu"});
    expect_invalid(c, "thread edge 'gpu' -> 'gpu' is a self-loop");
  }
  {  // cycle
    auto c = configurations::get("cpu_only");
    c.teams.push_back({"t2", DataType::tile, "A", 1});
    c.work = {{"cpu", "t2"}, {"t2", "cpu"}};
    expect_invalid(c, "cycle");
  }
  {  // packet never unpacked
    auto c = base();
    c.work.pop_back();
    c.helpers.pop_back();
    expect_invalid(c, "team 'gpu' is the end of a pipeline");
  }
  {  // aggregator receives incomplete blocks
    auto c = configurations::get("data_parallel_accumulator");
    c.distributor.groups[0].unit = RoutingUnit::tile;
    c.distributor.groups[0].pipelines = {"cpu"};
    c.distributor.groups[0].weights.clear();
    c.helpers.erase(c.helpers.begin());  // to_gpu
    c.work.erase(c.work.begin());
    c.teams.erase(c.teams.begin() + 1);  // gpu
    c.helpers.erase(c.helpers.begin());  // gpu_to_fpga
    c.work.erase(c.work.begin(), c.work.begin() + 2);
    expect_invalid(c, "helper 'cpu_to_fpga' may receive incomplete blocks");
  }
  {  // thread budget (Req ThreadBalance)
    auto c = configurations::get("concurrent_itor");
    c.teams[1].initial_threads = 4;
    expect_invalid(c, "team 'post' may get 5 active threads");
  }
  {  // more teams than the runtime has
    auto c = base();
    CHECK_THROWS_WITH_AS(validate(c, RuntimeShape{1, 4, 6, 2}),
                         doctest::Contains("needs 2 teams but the runtime has 1"), Error);
  }
  {  // distributor feeding a packet team
    auto c = base();
    c.distributor.groups[0].pipelines[1] = "gpu";
    expect_invalid(c, "work edge 'distributor' -> 'gpu'");
  }
  {  // unfed team
    auto c = base();
    c.teams.push_back({"lonely", DataType::tile, "A", 1});
    expect_invalid(c, "team 'lonely' receives no work");
  }
  {  // helper with two publishers
    auto c = configurations::get("cpu_gpu_action_parallel");
    c.teams.push_back({"gpu2", DataType::packet_of_blocks, "B", 1});
    c.helpers.push_back({"to_gpu2",
                         HelperKind::aggregator_mover,
                         DataType::block,
                         DataType::packet_of_blocks,
                         1,
                         MoveDirection::host_to_device,
                         2,
                         {},
                         0.5,
                         {},
                         RoutingUnit::block});
    c.work.push_back({"to_gpu2", "gpu2"});
    c.work.push_back({"gpu2", "from_gpu"});
    c.distributor.groups.push_back({{"to_gpu2"}, DistributionPolicy::fixed_fraction, {}, RoutingUnit::block});
    expect_invalid(c, "helper 'from_gpu' has 2 publishers");
  }
  {  // splitter on packets still on the device
    auto c = configurations::get("concurrent_itor");
    c.helpers[1].kind = HelperKind::splitter;
    expect_invalid(c, "helper 'from_gpu'");
  }
  {  // bundle mismatch
    auto c = configurations::get("cpu_only");
    Bundle b;
    b.add(ActionRoutine("Z", [](const ActionContext&, DataItem&) {}));
    CHECK_THROWS_WITH_AS(validate(c, RuntimeShape{6, 4, 6, 2}, &b), doctest::Contains("team 'cpu' applies action 'A'"),
                         Error);
  }
}

TEST_CASE("JSON: configurations round-trip; bad JSON names the offending field") {
  for (const auto& n : configurations::names()) {
    const auto c = configurations::get(n);
    const auto again = Configuration::from_json(c.to_json());
    CHECK(again.to_json() == c.to_json());
  }
  auto bad = [](const std::string& text, const char* fragment) {
    CAPTURE(fragment);
    CHECK_THROWS_WITH_AS(Configuration::from_json(text), doctest::Contains(fragment), Error);
  };
  const std::string dist = R"("distributor": {"kind": "action_parallel", "groups": [{"pipelines": ["t"]}]})";
  bad(R"({"name": "x", "teams": [{"name": "t", "type": "tile", "action": "A", "threads": "two"}], )" + dist + "}",
      "field teams[0].threads: expected an unsigned integer");
  bad(R"({"name": "x", "teams": [{"name": "t", "type": "tiles", "action": "A"}], )" + dist + "}",
      "field teams[0].type: unknown data type \"tiles\"");
  bad(R"({"name": "x", "teams": [{"name": "t", "type": "tile"}], )" + dist + "}", "field teams[0].action: missing");
  bad(R"({"name": "x", "teams": [{"name": "t", "type": "tile", "action": "A", "thread": 1}], )" + dist + "}",
      "field teams[0].thread: unknown field");
  bad(R"({"name": "x", "teams": [], "distributor": {"kind": "magic", "groups": []}})", "field distributor.kind");
  bad(R"({"name": "x", "teams": [], "helpers": [{"name": "h", "kind": "mover", "input": "packet_of_blocks", "variables": {"copy_in": ["a"]}}], )" +
          dist + "}",
      "field helpers[0].variables.copy_in[0]");
  bad(R"({"name": "x", "teams": [], "distributor": {"kind": "data_parallel", "groups": [{"pipelines": ["t"], "weights": [0]}]}})",
      "field distributor.groups[0].weights[0]");
  bad(R"({"name": "x", "teams": [], "distributor": {"kind": "data_parallel", "groups": [{"pipelines": ["t"], "policy": "fair"}]}})",
      "use one of fixed_fraction, queue_depth");
  bad("{not json", "not valid JSON");
  // The policies are written by their C++ names; "static" and "dynamic" are read as synonyms.
  // (No structured binding: clang 15, hipcc's compiler, cannot capture one in CAPTURE's lambda.)
  for (const auto& named : {std::pair<const char*, DistributionPolicy>{"static", DistributionPolicy::fixed_fraction},
                            {"dynamic", DistributionPolicy::queue_depth},
                            {"fixed_fraction", DistributionPolicy::fixed_fraction},
                            {"queue_depth", DistributionPolicy::queue_depth},
                            {"throughput", DistributionPolicy::throughput}}) {
    const char* word = named.first;
    const DistributionPolicy policy = named.second;
    CAPTURE(word);
    const auto c =
        Configuration::from_json(std::string(R"({"name": "p", "teams": [{"name": "t", "type": "tile", "action": "A"}],
      "distributor": {"kind": "data_parallel", "groups": [{"pipelines": ["t"], "policy": ")") +
                                 word + R"("}]}})");
    REQUIRE(c.distributor.groups.size() == 1);
    CHECK(c.distributor.groups[0].policy == policy);
    CHECK(c.to_json().find(std::string("\"") + to_string(policy) + "\"") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(configurations::get("nope"), doctest::Contains("cpu_only"), Error);
}

TEST_CASE("Runtime: a JSON configuration runs like a built-in") {
  Runtime rt;
  Grid grid(spec());
  fill_pattern(grid);
  Grid reference = grid.clone();
  apply_reference(reference, {A});
  const auto c = Configuration::from_json(R"({
    "name": "two_cpu_teams_dynamic",
    "teams": [ {"name": "left", "type": "tile", "action": "A", "threads": 2},
               {"name": "right", "type": "block", "action": "A", "threads": 1} ],
    "distributor": {"kind": "data_parallel", "groups": [ {"pipelines": ["left", "right"], "policy": "dynamic"} ]}
  })");
  rt.execute(bundle_of({A}, nullptr), c, grid);
  CHECK(grid.max_interior_difference(reference) == 0.0);
}

TEST_CASE("Trace: transfer_overlap measures the transfer time during which some task ran") {
  auto ev = [](const char* category, std::int64_t b, std::int64_t e) {
    TraceEvent t;
    t.category = category;
    t.begin_ns = b;
    t.end_ns = e;
    return t;
  };
  // Tasks cover [0,10) and [5,20) (one piece [0,20)) and [30,40); transfers [15,35), [40,50), [50,50).
  const std::vector<TraceEvent> events{ev("task", 0, 10),     ev("transfer", 15, 35), ev("task", 5, 20),
                                       ev("task", 30, 40),    ev("transfer", 40, 50), ev("helper", 40, 50),
                                       ev("transfer", 50, 50)};
  const auto o = transfer_overlap(events);
  CHECK(o.transfers == 2);
  CHECK(o.transfer_ns == 30);
  CHECK(o.overlapped_ns == 5 + 5);  // [15,20) and [30,35); [40,50) meets no task
  CHECK(o.fraction() == doctest::Approx(10.0 / 30.0));
  CHECK(transfer_overlap({}).fraction() == 0.0);
}

TEST_CASE("Trace: tasks, transfers and helper steps are recorded and exported as Chrome trace JSON") {
  Runtime rt;
  Trace trace;
  rt.set_trace(&trace);
  Grid grid(spec());
  rt.execute(bundle_of({A, B_indep, C_dep}, nullptr), configurations::get("concurrent_itor"), grid);
  rt.set_trace(nullptr);
  std::set<std::string> cats, names;
  for (const auto& e : trace.events()) {
    cats.insert(e.category);
    names.insert(e.name);
    CHECK(e.end_ns >= e.begin_ns);
  }
  CHECK(cats == std::set<std::string>{"distributor", "helper", "task", "transfer"});
  CHECK(names.count("host_to_device"));
  CHECK(names.count("device_to_host"));
  CHECK(names.count("unpack"));
  CHECK(names.count("split"));
  const auto overlap = transfer_overlap(trace.events());
  CHECK(overlap.transfers > 0);
  CHECK(overlap.overlapped_ns <= overlap.transfer_ns);
  const std::string json = trace.to_chrome_json();
  CHECK(json.find("\"traceEvents\"") != std::string::npos);
  CHECK(json.find("\"ph\":\"X\"") != std::string::npos);
  CHECK(json.find("thread_name") != std::string::npos);
  CHECK_THROWS_WITH_AS(trace.write_chrome_json("/nonexistent/dir/t.json"), doctest::Contains("cannot open"), Error);
}

TEST_CASE("Record/replay: a recorded cycle replays in exactly the recorded order with the same grid result") {
  Runtime rt;
  for (const char* name : {"concurrent_itor", "mashup", "hybrid_distributor", "big_example"}) {
    INFO(name);
    const Case c = [&] {
      for (const auto& k : cases())
        if (k.config == name) return k;
      return cases()[0];
    }();
    Recorder recorder;
    rt.set_recorder(&recorder);
    Grid grid(spec());
    fill_pattern(grid);
    Grid replayed = grid.clone();
    rt.execute(bundle_of(c.actions, nullptr), configurations::get(name), grid);
    rt.set_recorder(nullptr);
    const Recording rec = Recording::from_json(recorder.recording().to_json());
    CHECK(!rec.tasks.empty());
    CHECK(rec.teams.size() == configurations::get(name).teams.size() + configurations::get(name).helpers.size());
    ActionLog log;
    const Recording again = replay(rec, bundle_of(c.actions, &log), replayed, rt);
    REQUIRE(again.tasks.size() == rec.tasks.size());
    for (std::size_t i = 0; i < rec.tasks.size(); ++i) {
      CHECK(again.tasks[i].node == rec.tasks[i].node);
      CHECK(again.tasks[i].item == rec.tasks[i].item);
    }
    check_log(log, replayed, names_of(c.actions), c.order);
    CHECK(replayed.max_interior_difference(grid) == 0.0);
    CHECK(rt.pinned_pool().outstanding_bytes() == 0);
    CHECK(rt.device_pool().outstanding_bytes() == 0);
  }
}
