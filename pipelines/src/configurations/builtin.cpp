// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>

#include <map>

namespace korch::configurations {

namespace {

// Each built-in's JSON text, in the order of names().
struct BuiltinJson {
  const char* name;
  const char* json;
};
constexpr BuiltinJson builtin_json[] = {
    {"cpu_only", R"({
  "name": "cpu_only",
  "teams": [ {"name": "cpu", "type": "tile", "action": "A", "threads": 2} ],
  "distributor": {"kind": "action_parallel", "groups": [ {"pipelines": ["cpu"]} ]}
})"},
    {"gpu_only", R"({
  "name": "gpu_only",
  "teams": [ {"name": "gpu", "type": "packet_of_blocks", "action": "A", "threads": 2} ],
  "helpers": [
    {"name": "to_gpu", "kind": "aggregator_mover", "input": "block", "output": "packet_of_blocks", "packet_blocks": 2},
    {"name": "from_gpu", "kind": "mover_unpacker", "input": "packet_of_blocks"} ],
  "work": [ {"from": "to_gpu", "to": "gpu"}, {"from": "gpu", "to": "from_gpu"} ],
  "distributor": {"kind": "action_parallel", "groups": [ {"pipelines": ["to_gpu"]} ]}
})"},
    {"gpu_internal", R"({
  "name": "gpu_internal",
  "teams": [ {"name": "gpu", "type": "action_metadata", "action": "A", "threads": 2} ],
  "distributor": {"kind": "action_parallel", "groups": [ {"pipelines": ["gpu"]} ]}
})"},
    {"cpu_gpu_action_parallel", R"({
  "name": "cpu_gpu_action_parallel",
  "teams": [ {"name": "cpu", "type": "tile", "action": "A", "threads": 1},
             {"name": "gpu", "type": "packet_of_blocks", "action": "B", "threads": 3} ],
  "helpers": [
    {"name": "to_gpu", "kind": "aggregator_mover", "input": "block", "output": "packet_of_blocks", "packet_blocks": 2, "variables": {"copy_in_out": [1]}},
    {"name": "from_gpu", "kind": "mover_unpacker", "input": "packet_of_blocks"} ],
  "work": [ {"from": "to_gpu", "to": "gpu"}, {"from": "gpu", "to": "from_gpu"} ],
  "distributor": {"kind": "action_parallel", "groups": [ {"pipelines": ["cpu"]}, {"pipelines": ["to_gpu"]} ]}
})"},
    {"cpu_gpu_data_parallel", R"({
  "name": "cpu_gpu_data_parallel",
  "teams": [ {"name": "cpu", "type": "tile", "action": "A", "threads": 2},
             {"name": "gpu", "type": "packet_of_blocks", "action": "A", "threads": 2} ],
  "helpers": [
    {"name": "to_gpu", "kind": "aggregator_mover", "input": "block", "output": "packet_of_blocks", "packet_blocks": 2},
    {"name": "from_gpu", "kind": "mover_unpacker", "input": "packet_of_blocks"} ],
  "work": [ {"from": "to_gpu", "to": "gpu"}, {"from": "gpu", "to": "from_gpu"} ],
  "distributor": {"kind": "data_parallel",
                  "groups": [ {"pipelines": ["cpu", "to_gpu"], "policy": "fixed_fraction", "weights": [1, 1]} ]}
})"},
    {"hybrid_distributor", R"({
  "name": "hybrid_distributor",
  "teams": [ {"name": "cpu", "type": "tile", "action": "A", "threads": 1},
             {"name": "gpu", "type": "packet_of_blocks", "action": "A", "threads": 2},
             {"name": "fpga", "type": "packet_of_tiles", "action": "B", "threads": 1} ],
  "helpers": [
    {"name": "to_gpu", "kind": "aggregator_mover", "input": "block", "output": "packet_of_blocks", "packet_blocks": 2, "variables": {"copy_in_out": [0]}},
    {"name": "from_gpu", "kind": "mover_unpacker", "input": "packet_of_blocks"},
    {"name": "to_fpga", "kind": "aggregator_mover", "input": "tile", "output": "packet_of_tiles", "packet_blocks": 1, "variables": {"copy_in_out": [1]}},
    {"name": "from_fpga", "kind": "mover_unpacker", "input": "packet_of_tiles"} ],
  "work": [ {"from": "to_gpu", "to": "gpu"}, {"from": "gpu", "to": "from_gpu"},
            {"from": "to_fpga", "to": "fpga"}, {"from": "fpga", "to": "from_fpga"} ],
  "distributor": {"kind": "hybrid",
                  "groups": [ {"pipelines": ["cpu", "to_gpu"], "policy": "queue_depth"},
                              {"pipelines": ["to_fpga"]} ]}
})"},
    {"data_parallel_accumulator", R"({
  "name": "data_parallel_accumulator",
  "teams": [ {"name": "cpu", "type": "tile", "action": "A", "threads": 2},
             {"name": "gpu", "type": "packet_of_blocks", "action": "A", "threads": 2},
             {"name": "fpga", "type": "packet_of_blocks", "action": "B", "threads": 2} ],
  "helpers": [
    {"name": "to_gpu", "kind": "aggregator_mover", "input": "block", "output": "packet_of_blocks", "packet_blocks": 2, "variables": {"copy_in_out": [0, 1]}},
    {"name": "gpu_to_fpga", "kind": "mover", "input": "packet_of_blocks", "direction": "device_to_device"},
    {"name": "cpu_to_fpga", "kind": "aggregator_mover", "input": "tile", "output": "packet_of_blocks", "packet_blocks": 2, "variables": {"copy_in": [0], "copy_in_out": [1]}},
    {"name": "from_fpga", "kind": "mover_unpacker", "input": "packet_of_blocks"} ],
  "work": [ {"from": "to_gpu", "to": "gpu"}, {"from": "gpu", "to": "gpu_to_fpga"}, {"from": "gpu_to_fpga", "to": "fpga"},
            {"from": "cpu", "to": "cpu_to_fpga"}, {"from": "cpu_to_fpga", "to": "fpga"},
            {"from": "fpga", "to": "from_fpga"} ],
  "distributor": {"kind": "data_parallel",
                  "groups": [ {"pipelines": ["cpu", "to_gpu"], "policy": "fixed_fraction", "weights": [1, 1]} ]}
})"},
    {"mashup", R"({
  "name": "mashup",
  "teams": [ {"name": "cpu", "type": "tile", "action": "A", "threads": 1},
             {"name": "gpu", "type": "packet_of_blocks", "action": "A", "threads": 2},
             {"name": "fpga", "type": "packet_of_blocks", "action": "B", "threads": 1},
             {"name": "fpga2", "type": "packet_of_tiles", "action": "C", "threads": 2} ],
  "helpers": [
    {"name": "to_gpu", "kind": "aggregator_mover", "input": "block", "output": "packet_of_blocks", "packet_blocks": 2, "variables": {"copy_in_out": [0, 1]}},
    {"name": "gpu_to_fpga", "kind": "mover", "input": "packet_of_blocks", "direction": "device_to_device"},
    {"name": "cpu_to_fpga", "kind": "aggregator_mover", "input": "tile", "output": "packet_of_blocks", "packet_blocks": 2, "variables": {"copy_in": [0], "copy_in_out": [1]}},
    {"name": "from_fpga", "kind": "mover_unpacker", "input": "packet_of_blocks"},
    {"name": "to_fpga2", "kind": "aggregator_mover", "input": "tile", "output": "packet_of_tiles", "packet_blocks": 1, "variables": {"copy_in_out": [2]}},
    {"name": "from_fpga2", "kind": "mover_unpacker", "input": "packet_of_tiles"} ],
  "work": [ {"from": "to_gpu", "to": "gpu"}, {"from": "gpu", "to": "gpu_to_fpga"}, {"from": "gpu_to_fpga", "to": "fpga"},
            {"from": "cpu", "to": "cpu_to_fpga"}, {"from": "cpu_to_fpga", "to": "fpga"},
            {"from": "fpga", "to": "from_fpga"},
            {"from": "to_fpga2", "to": "fpga2"}, {"from": "fpga2", "to": "from_fpga2"} ],
  "threads": [ {"from": "fpga2", "to": "fpga"} ],
  "distributor": {"kind": "hybrid",
                  "groups": [ {"pipelines": ["cpu", "to_gpu"], "policy": "fixed_fraction", "weights": [1, 1]},
                              {"pipelines": ["to_fpga2"]} ]}
})"},
    {"concurrent_itor", R"({
  "name": "concurrent_itor",
  "teams": [ {"name": "host", "type": "tile", "action": "A", "threads": 1},
             {"name": "gpu", "type": "packet_of_blocks", "action": "B", "threads": 2},
             {"name": "post", "type": "tile", "action": "C", "threads": 0} ],
  "helpers": [
    {"name": "to_gpu", "kind": "aggregator_mover", "input": "block", "output": "packet_of_blocks", "packet_blocks": 2, "variables": {"copy_in_out": [1]}},
    {"name": "from_gpu", "kind": "mover_unpacker_splitter", "input": "packet_of_blocks", "output": "tile"} ],
  "work": [ {"from": "to_gpu", "to": "gpu"}, {"from": "gpu", "to": "from_gpu"}, {"from": "from_gpu", "to": "post"} ],
  "threads": [ {"from": "host", "to": "post"}, {"from": "gpu", "to": "post"} ],
  "distributor": {"kind": "action_parallel", "groups": [ {"pipelines": ["host"]}, {"pipelines": ["to_gpu"]} ]}
})"},
    {"split_itor", R"({
  "name": "split_itor",
  "teams": [ {"name": "cpu", "type": "tile", "action": "A", "threads": 2},
             {"name": "gpu", "type": "packet_of_blocks", "action": "A", "threads": 1},
             {"name": "post", "type": "tile", "action": "B", "threads": 0} ],
  "helpers": [
    {"name": "to_gpu", "kind": "aggregator_mover", "input": "block", "output": "packet_of_blocks", "packet_blocks": 2, "variables": {"copy_in_out": [0]}},
    {"name": "from_gpu", "kind": "mover_unpacker_splitter", "input": "packet_of_blocks", "output": "tile"} ],
  "work": [ {"from": "to_gpu", "to": "gpu"}, {"from": "gpu", "to": "from_gpu"}, {"from": "from_gpu", "to": "post"},
            {"from": "cpu", "to": "post"} ],
  "threads": [ {"from": "cpu", "to": "post"}, {"from": "gpu", "to": "post"} ],
  "distributor": {"kind": "data_parallel",
                  "groups": [ {"pipelines": ["cpu", "to_gpu"], "policy": "fixed_fraction", "weights": [1, 1]} ]}
})"},
    {"big_example", R"({
  "name": "big_example",
  "teams": [ {"name": "a_cpu", "type": "tile", "action": "A", "threads": 2},
             {"name": "b_cpu", "type": "tile", "action": "B", "threads": 1},
             {"name": "b_gpu", "type": "packet_of_blocks", "action": "B", "threads": 1},
             {"name": "c_gpu", "type": "packet_of_blocks", "action": "C", "threads": 2} ],
  "helpers": [
    {"name": "split_b", "kind": "router", "input": "tile", "fraction": 0.5, "to": ["to_b_gpu", "b_cpu"], "unit": "block"},
    {"name": "to_b_gpu", "kind": "aggregator_mover", "input": "tile", "output": "packet_of_blocks", "packet_blocks": 2, "variables": {"copy_in": [0], "copy_in_out": [1, 2]}},
    {"name": "to_c_gpu", "kind": "aggregator_mover", "input": "tile", "output": "packet_of_blocks", "packet_blocks": 2, "variables": {"copy_in": [1], "copy_in_out": [2]}},
    {"name": "from_gpu", "kind": "mover_unpacker", "input": "packet_of_blocks"} ],
  "work": [ {"from": "a_cpu", "to": "split_b"},
            {"from": "to_b_gpu", "to": "b_gpu"}, {"from": "b_gpu", "to": "c_gpu"},
            {"from": "b_cpu", "to": "to_c_gpu"}, {"from": "to_c_gpu", "to": "c_gpu"},
            {"from": "c_gpu", "to": "from_gpu"} ],
  "distributor": {"kind": "action_parallel", "groups": [ {"pipelines": ["a_cpu"]} ]}
})"},
};

const std::map<std::string, std::string>& table() {
  static const std::map<std::string, std::string> t = [] {
    std::map<std::string, std::string> by_name;
    for (const BuiltinJson& b : builtin_json) by_name.emplace(b.name, b.json);
    return by_name;
  }();
  return t;
}

// One line per slot of each built-in: where and when its action runs, what it reads and writes.
const std::map<std::string, std::map<std::string, std::string>>& descriptions() {
  static const std::map<std::string, std::map<std::string, std::string>> d = {
      {"cpu_only", {{"A", "the action, on every tile, on the host"}}},
      {"gpu_only", {{"A", "the action, on every block, in packets of 2 blocks on the device"}}},
      {"gpu_internal", {{"A", "the action, given each block's metadata on a device team; it finds the data itself"}}},
      {"cpu_gpu_action_parallel",
       {{"A", "on every tile on the host; writes variable 0"},
        {"B",
         "on every block on the device, at the same time as A; writes variable 1, the one its packets copy back"}}},
      {"cpu_gpu_data_parallel",
       {{"A", "on each block once: half the blocks as tiles on the host, half packed for the device"}}},
      {"hybrid_distributor",
       {{"A", "on each block once, as host tiles or device packets, whichever queue is shorter; writes variable 0"},
        {"B",
         "on every tile, packed one block per packet for the fpga team, at the same time as A; writes variable 1"}}},
      {"data_parallel_accumulator",
       {{"A", "on each block once: half as host tiles, half as device packets; writes variable 0"},
        {"B", "after A, on every block, both halves packed for the fpga team; reads variable 0, writes variable 1"}}},
      {"mashup",
       {{"A", "on each block once: half as host tiles, half as device packets; writes variable 0"},
        {"B", "after A, on every block, both halves packed for the fpga team; reads variable 0, writes variable 1"},
        {"C",
         "on every tile, packed for fpga2, at the same time as A and B; writes variable 2; fpga2's threads then "
         "join fpga"}}},
      {"concurrent_itor",
       {{"A", "on every tile on the host; writes variable 0"},
        {"B", "on every block on the device, at the same time as A; writes variable 1"},
        {"C",
         "after B, on the tiles of each block back on the host, with the threads host and gpu hand on; "
         "reads variable 1, writes variable 2; left unbound, the post team is dropped"}}},
      {"split_itor",
       {{"A", "on each block once: half as host tiles, half as device packets"},
        {"B",
         "after A, on every tile on the host, with the threads cpu and gpu hand on; reads variable 0, "
         "writes variable 1; left unbound, the post team is dropped"}}},
      {"big_example",
       {{"A", "on every tile on the host; writes variable 0"},
        {"B",
         "after A: half the blocks as host tiles, half packed for the device; reads variable 0, writes variable 1"},
        {"C", "after B, on every block packed on the device; reads variable 1, writes variable 2"}}},
  };
  return d;
}

}  // namespace

std::vector<std::string> names() {
  return {"cpu_only",
          "gpu_only",
          "gpu_internal",
          "cpu_gpu_action_parallel",
          "cpu_gpu_data_parallel",
          "hybrid_distributor",
          "data_parallel_accumulator",
          "mashup",
          "concurrent_itor",
          "split_itor",
          "big_example"};
}

const std::string& json(const std::string& name) {
  auto it = table().find(name);
  if (it == table().end()) {
    std::string all;
    for (const auto& n : names()) all += (all.empty() ? "" : ", ") + n;
    throw Error::format("configurations: no built-in configuration '{}': use one of {}", excerpt(name), all);
  }
  return it->second;
}

Configuration get(const std::string& name) { return Configuration::from_json(json(name)); }

Configuration get(const std::string& name, const ActionBinding& actions) { return get(name).bind_actions(actions); }

std::vector<ActionSlot> slots(const std::string& name) {
  std::vector<ActionSlot> out = get(name).slots();
  const auto& lines = descriptions().at(name);
  for (auto& s : out) {
    auto it = lines.find(s.name);
    if (it == lines.end())
      throw Error::format("configurations: built-in '{}' has no description of its slot '{}'", excerpt(name),
                          excerpt(s.name));
    s.description = it->second;
  }
  return out;
}

}  // namespace korch::configurations
