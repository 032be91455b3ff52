// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/configuration.hpp>
#include <korch/error.hpp>

namespace korch {

const char* to_string(HelperKind kind) noexcept {
  switch (kind) {
    case HelperKind::mover: return "mover";
    case HelperKind::unpacker: return "unpacker";
    case HelperKind::splitter: return "splitter";
    case HelperKind::aggregator: return "aggregator";
    case HelperKind::mover_unpacker: return "mover_unpacker";
    case HelperKind::mover_unpacker_splitter: return "mover_unpacker_splitter";
    case HelperKind::aggregator_mover: return "aggregator_mover";
    case HelperKind::router: return "router";
  }
  return "?";
}
const char* to_string(MoveDirection d) noexcept {
  switch (d) {
    case MoveDirection::host_to_device: return "host_to_device";
    case MoveDirection::device_to_host: return "device_to_host";
    case MoveDirection::device_to_device: return "device_to_device";
  }
  return "?";
}
const char* to_string(DistributorKind k) noexcept {
  switch (k) {
    case DistributorKind::action_parallel: return "action_parallel";
    case DistributorKind::data_parallel: return "data_parallel";
    case DistributorKind::hybrid: return "hybrid";
  }
  return "?";
}
const char* to_string(DistributionPolicy p) noexcept {
  switch (p) {
    case DistributionPolicy::fixed_fraction: return "fixed_fraction";
    case DistributionPolicy::queue_depth: return "queue_depth";
    case DistributionPolicy::throughput: return "throughput";
  }
  return "?";
}
const char* to_string(RoutingUnit u) noexcept { return u == RoutingUnit::block ? "block" : "tile"; }

std::vector<Edge> Configuration::all_work_edges() const {
  std::vector<Edge> edges = work;
  for (const auto& h : helpers)
    if (h.kind == HelperKind::router)
      for (const auto& to : h.to) edges.push_back(Edge{h.name, to});
  return edges;
}

const TeamConfig* Configuration::find_team(const std::string& n) const noexcept {
  for (const auto& t : teams)
    if (t.name == n) return &t;
  return nullptr;
}
const HelperConfig* Configuration::find_helper(const std::string& n) const noexcept {
  for (const auto& h : helpers)
    if (h.name == n) return &h;
  return nullptr;
}

}  // namespace korch
