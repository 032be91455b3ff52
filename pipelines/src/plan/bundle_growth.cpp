// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "bundle_growth.hpp"

#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace korch::plan::detail {

BundleGrowth::BundleGrowth(const KernelGraph& graph, const SchedulerOptions& options)
    : graph_(graph), options_(options), root_(graph.actions().size(), -1) {}

void BundleGrowth::clear() {
  for (const auto& [first, pipeline] : pipelines_)
    for (int a : pipeline.actions) root_[static_cast<std::size_t>(a)] = -1;
  pipelines_.clear();
}

std::vector<int> BundleGrowth::members() const {
  std::vector<int> out;
  for (const auto& [first, pipeline] : pipelines_)
    out.insert(out.end(), pipeline.actions.begin(), pipeline.actions.end());
  std::sort(out.begin(), out.end());
  return out;
}

// The teams and helpers of a placed pipeline as lay_out counts them (bundle_layout.cpp): a part on
// one side fuses into one team, a split part into a host and a device team; a router and an
// aggregator where a split follows host stages, an aggregator before device stages after others.
bool BundleGrowth::placeable(const std::vector<int>& actions) const {
  bool device_only = false;
  for (int a : actions) {
    const ActionHints& hints = graph_.actions()[static_cast<std::size_t>(a)].hints;
    if (hints.device_only && !options_.cost.devices) return false;
    if (hints.host_only && device_only) return false;
    device_only = device_only || hints.device_only;
  }
  return true;
}

void BundleGrowth::place(const std::vector<int>& actions, Shape& shape) const {
  std::vector<const ActionDeclaration*> declared;
  declared.reserve(actions.size());
  for (int a : actions) declared.push_back(&graph_.actions()[static_cast<std::size_t>(a)]);
  const auto placed = options_.cost.place(declared);
  if (!placed)
    throw Error::format(
        "scheduler: a pipeline from action '{}' has no placement although its hints allow one: "
        "a scheduler fault, please report it with the operation file",
        declared.front()->action);
  bool host = false, split = false, device = false;
  double split_host = 0.0, split_device = 0.0;
  for (std::size_t k = 0; k < declared.size(); ++k) {
    const Placement p = placed->actions[k];
    host = host || p == Placement::host;
    device = device || p == Placement::device;
    if (p == Placement::split) {
      split = true;
      split_host += options_.cost.host_cost(*declared[k]);
      split_device += options_.cost.device_cost(*declared[k]);
    }
  }
  shape.split = split;
  shape.teams = (host ? 1u : 0u) + (split ? 2u : 0u) + (device ? 1u : 0u);
  shape.helpers = (host && split ? 2u : 0u) + ((host || split) && device ? 1u : 0u);
  // Giving up the split sends its part to the side cheaper for it, as lay_out does.
  const bool to_host = split && split_host <= split_device, to_device = split && !to_host;
  const bool any_host = host || to_host, any_device = device || to_device;
  shape.unsplit_teams = (any_host ? 1u : 0u) + (any_device ? 1u : 0u);
  shape.unsplit_helpers = any_host && any_device ? 1u : 0u;
  shape.known = true;
}

// lay_out's loop: fuse while the teams do not fit, give up splits in pipeline order while the
// fused teams or the helpers do not fit.
bool BundleGrowth::fits(const std::map<int, Shape*>& pipelines) const {
  unsigned teams = 0, helpers = 0;
  for (const auto& [first, shape] : pipelines) {
    teams += shape->teams;
    helpers += shape->helpers;
  }
  auto ok = [&] { return teams <= options_.shape.n_teams && helpers <= options_.shape.n_helpers; };
  if (ok()) return true;
  for (const auto& [first, shape] : pipelines) {
    if (!shape->split) continue;
    teams -= shape->teams - shape->unsplit_teams;
    helpers -= shape->helpers - shape->unsplit_helpers;
    if (ok()) return true;
  }
  return false;
}

bool BundleGrowth::start(int seed) {
  clear();
  return try_add(seed);
}

bool BundleGrowth::try_add(int action) {
  // The pipelines the action joins: those of the members it depends on.
  std::vector<int> joined;
  for (int d : graph_.into(action)) {
    const int root = root_[static_cast<std::size_t>(graph_.dependences()[static_cast<std::size_t>(d)].from)];
    if (root >= 0 && std::find(joined.begin(), joined.end(), root) == joined.end()) joined.push_back(root);
  }
  std::vector<int> actions;
  for (int r : joined) {
    const auto& more = pipelines_.at(r).actions;
    actions.insert(actions.end(), more.begin(), more.end());
  }
  actions.push_back(action);
  if (joined.size() > 1 || actions.front() > action) std::sort(actions.begin(), actions.end());
  if (!placeable(actions)) return false;
  Pipeline grown;
  std::map<int, Shape*> shapes;
  for (auto& [first, pipeline] : pipelines_)
    if (std::find(joined.begin(), joined.end(), first) == joined.end()) shapes.emplace(first, &pipeline.shape);
  shapes.emplace(actions.front(), &grown.shape);
  if (!fits(shapes)) {
    // Place the pipelines still counted at their largest, and ask again.
    bool placed_any = false;
    for (auto& [first, shape] : shapes) {
      if (shape->known) continue;
      place(first == actions.front() ? actions : pipelines_.at(first).actions, *shape);
      placed_any = true;
    }
    if (!placed_any || !fits(shapes)) return false;
  }
  for (int r : joined) pipelines_.erase(r);
  for (int a : actions) root_[static_cast<std::size_t>(a)] = actions.front();
  grown.actions = std::move(actions);
  const int first = grown.actions.front();
  pipelines_.emplace(first, std::move(grown));
  return true;
}

}  // namespace korch::plan::detail
