// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/plan/cost_model.hpp>

#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

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

void check_cost_range(const ActionDeclaration& a) {
  const std::pair<double, const char*> given[] = {{a.hints.host_cost, "hints.cost.host"},
                                                  {a.hints.device_cost, "hints.cost.device"},
                                                  {a.hints.measured_host, "hints.measured.host"},
                                                  {a.hints.measured_device, "hints.measured.device"}};
  for (const auto& [cost, field] : given) {
    if (cost == 0.0 || (cost >= min_given_cost && cost <= max_given_cost)) continue;
    throw Error::format(
        "action '{}': field {}: {} is outside the costs the planner adds up without overflow "
        "([{}, {}], or 0 for none): scale the operation's costs",
        a.action, field, cost, min_given_cost, max_given_cost);
  }
}

namespace {

// Time per item of work costing h on the host and d on a device, shared by speed: both sides busy.
// Far from the ends of double's range the plain formula; near them (a product that overflows or
// underflows) the same value written so that no intermediate leaves the range.
double split_cost(double h, double d) {
  const double product = h * d, total = h + d;
  if (std::isnormal(product) && std::isfinite(total)) return product / total;
  const double low = std::min(h, d), high = std::max(h, d);
  return high > 0.0 ? low / (1.0 + low / high) : 0.0;
}

}  // namespace

void CostModel::summarize(PipelinePlacement& p, const std::vector<const ActionDeclaration*>& actions) const {
  p.host_cost = p.device_cost = 0.0;
  double split_host = 0.0, split_device = 0.0;
  bool host = false, device = false, split = false;
  for (std::size_t k = 0; k < actions.size(); ++k) {
    p.host_cost += host_cost(*actions[k]);
    p.device_cost += device_cost(*actions[k]);
    host = host || p.actions[k] == Placement::host;
    device = device || p.actions[k] == Placement::device;
    if (p.actions[k] == Placement::split) {
      split = true;
      split_host += host_cost(*actions[k]);
      split_device += device_cost(*actions[k]);
    }
  }
  p.placement = split || (host && device) ? Placement::split : device ? Placement::device : Placement::host;
  p.host_weight = split ? 1.0 / split_host : 1.0;
  p.device_weight = split ? 1.0 / split_device : 0.0;
}

namespace {

// Costs [from, to) summed left to right, as a plain loop would add them, so the placement search
// costs O(n²) and every comparison sees the same values.
double sum_range(const std::vector<double>& c, std::size_t from, std::size_t to) {
  double s = 0.0;
  for (std::size_t k = from; k < to; ++k) s += c[k];
  return s;
}

}  // namespace

std::optional<PipelinePlacement> CostModel::place(const std::vector<const ActionDeclaration*>& actions) const {
  const std::size_t n = actions.size();
  std::vector<double> h(n), d(n);
  std::size_t last_host_only = 0;     // actions before this index include every host_only one
  std::size_t first_device_only = n;  // and from this one on every device_only one
  for (std::size_t k = 0; k < n; ++k) {
    h[k] = host_cost(*actions[k]);
    d[k] = device_cost(*actions[k]);
    if (actions[k]->hints.host_only) last_host_only = k + 1;
    if (actions[k]->hints.device_only && first_device_only == n) first_device_only = k;
  }
  const bool host_only = last_host_only > 0, device_only = first_device_only < n;
  if (device_only && !devices) return std::nullopt;
  if (last_host_only > first_device_only) return std::nullopt;  // a device_only action before a host_only one
  PipelinePlacement p;
  p.actions.assign(n, Placement::host);
  if (!devices) {
    summarize(p, actions);
    return p;
  }
  std::vector<double> host_prefix(n + 1, 0.0), device_suffix(n + 1, 0.0);  // h over [0, i), d over [j, n)
  for (std::size_t i = 0; i < n; ++i) host_prefix[i + 1] = host_prefix[i] + h[i];
  for (std::size_t j = 0; j < n; ++j) device_suffix[j] = sum_range(d, j, n);
  // One side for the whole pipeline, when the hints allow it.
  std::optional<Placement> whole;
  double whole_cost = 0.0;
  const double H = host_prefix[n], D = sum_range(d, 0, n);
  if (!(host_only && device_only)) {
    if (device_only || (!host_only && D * clear_win <= H)) {
      whole = Placement::device;
      whole_cost = D;
    } else if (host_only || H * clear_win <= D) {
      whole = Placement::host;
      whole_cost = H;
    } else {
      whole = Placement::split;
      whole_cost = split_cost(H, D);
    }
  }
  // Stage by stage: host [0, i), split [i, j), device [j, n), at least two parts non-empty. A part
  // is split only where neither side is clearly cheaper for it, as for a whole pipeline.
  double best = std::numeric_limits<double>::infinity();
  std::size_t best_i = 0, best_j = 0;
  for (std::size_t i = last_host_only; i <= n; ++i) {
    double sh = 0.0, sd = 0.0;  // h and d over [i, j)
    for (std::size_t j = i; j <= first_device_only; ++j) {
      if (j > i) {
        sh += h[j - 1];
        sd += d[j - 1];
      }
      const int parts = (i > 0) + (j > i) + (j < n);
      if (parts < 2) continue;
      if (j > i && (sh * clear_win <= sd || sd * clear_win <= sh)) continue;
      const double cost =
          host_prefix[i] + (j > i ? split_cost(sh, sd) : 0.0) + device_suffix[j] + side_change * (parts - 1);
      if (cost < best) {
        best = cost;
        best_i = i;
        best_j = j;
      }
    }
  }
  const bool staged = best < std::numeric_limits<double>::infinity() && (!whole || best * clear_win <= whole_cost);
  if (!staged && !whole) return std::nullopt;
  for (std::size_t k = 0; k < n; ++k) {
    if (!staged) {
      p.actions[k] = *whole;
    } else {
      p.actions[k] = k < best_i ? Placement::host : k < best_j ? Placement::split : Placement::device;
    }
  }
  summarize(p, actions);
  return p;
}

}  // namespace korch::plan
