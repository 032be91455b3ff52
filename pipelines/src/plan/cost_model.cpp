#include <korch/plan/cost_model.hpp>

namespace korch::plan {

const char* to_string(Placement placement) noexcept {
  switch (placement) {
    case Placement::host: return "host";
    case Placement::device: return "device";
    case Placement::split: return "split";
  }
  return "?";
}

double CostModel::host_cost(const ActionDeclaration& a) const noexcept {
  if (a.hints.measured_host > 0) return a.hints.measured_host;
  if (a.hints.host_cost > 0) return a.hints.host_cost;
  return a.hints.short_running ? host_short : a.hints.heavy ? host_heavy : host_normal;
}

double CostModel::device_cost(const ActionDeclaration& a) const noexcept {
  if (a.hints.measured_device > 0) return a.hints.measured_device;
  if (a.hints.device_cost > 0) return a.hints.device_cost;
  return a.hints.short_running ? device_short : a.hints.heavy ? device_heavy : device_normal;
}

std::optional<PipelinePlacement> CostModel::place(const std::vector<const ActionDeclaration*>& actions) const {
  PipelinePlacement p;
  bool host_only = false, device_only = false;
  for (const ActionDeclaration* a : actions) {
    host_only = host_only || a->hints.host_only;
    device_only = device_only || a->hints.device_only;
    p.host_cost += host_cost(*a);
    p.device_cost += device_cost(*a);
  }
  if (host_only && device_only) return std::nullopt;
  if (device_only) {
    if (!devices) return std::nullopt;
    p.placement = Placement::device;
  } else if (host_only || !devices || p.host_cost * clear_win <= p.device_cost) {
    p.placement = Placement::host;
  } else if (p.device_cost * clear_win <= p.host_cost) {
    p.placement = Placement::device;
  } else {
    p.placement = Placement::split;
    p.host_weight = 1.0 / p.host_cost;
    p.device_weight = 1.0 / p.device_cost;
  }
  return p;
}

}  // namespace korch::plan
