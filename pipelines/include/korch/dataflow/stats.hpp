// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a pipeline run reports: per node, its firings, runs, lanes used, signals, flushes and
// blocks summed over all instances, and the lane utilization that follows from them.
#pragma once

#include <korch/dataflow/compiler.hpp>
#include <korch/error.hpp>

#include <string>
#include <vector>

namespace korch::dataflow {

struct NodeStats {
  std::string name;
  NodeKind kind = NodeKind::Map;
  long long firings = 0;
  long long runs = 0;
  long long lanes = 0;     // items consumed (enumerate: elements produced) summed over runs
  long long signals = 0;   // signals consumed
  long long flushes = 0;   // flushes completed
  long long blocks = 0;    // times blocked on a full parent buffer (enumerate)
  double utilization = 0;  // lanes / (runs x vector width)
};

struct RunStats {
  double seconds = 0;
  int instances = 0;
  int vector_width = 0;
  long long input_items = 0;
  bool team_scratch = false;      // instances kept their state in team scratch memory (Options::instance_memory)
  bool registers_capped = false;  // launched with at most 64 registers per lane (Options::cap_registers, GPUs)
  std::vector<NodeStats> nodes;
  const NodeStats& node(const std::string& name) const {
    for (const auto& n : nodes)
      if (n.name == name) return n;
    throw Error::format("run statistics: no node named '{}'", name);
  }
  // items consumed / (runs x vector width) over all nodes of the given kind
  double utilization(NodeKind kind) const {
    long long lanes = 0, runs = 0;
    for (const auto& n : nodes)
      if (n.kind == kind) {
        lanes += n.lanes;
        runs += n.runs;
      }
    return runs > 0 ? static_cast<double>(lanes) / (static_cast<double>(runs) * vector_width) : 0;
  }
};

}  // namespace korch::dataflow
