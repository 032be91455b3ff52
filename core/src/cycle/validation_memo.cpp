// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "validation_memo.hpp"

#include "wait_order.hpp"

#include <cstddef>

namespace korch::detail {

namespace {

bool same(const TeamConfig& a, const TeamConfig& b) {
  const auto& [name, type, action, initial_threads] = a;
  return name == b.name && type == b.type && action == b.action && initial_threads == b.initial_threads;
}

bool same(const PacketVariables& a, const PacketVariables& b) {
  const auto& [copy_in, copy_in_out, copy_out, scratch, face_copy_in, face_copy_in_out, face_copy_out] = a;
  return copy_in == b.copy_in && copy_in_out == b.copy_in_out && copy_out == b.copy_out && scratch == b.scratch &&
         face_copy_in == b.face_copy_in && face_copy_in_out == b.face_copy_in_out && face_copy_out == b.face_copy_out;
}

bool same(const HelperConfig& a, const HelperConfig& b) {
  const auto& [name, kind, input, output, threads, direction, packet_blocks, variables, fraction, to, unit] = a;
  return name == b.name && kind == b.kind && input == b.input && output == b.output && threads == b.threads &&
         direction == b.direction && packet_blocks == b.packet_blocks && same(variables, b.variables) &&
         fraction == b.fraction && to == b.to && unit == b.unit;
}

bool same(const Edge& a, const Edge& b) {
  const auto& [from, to] = a;
  return from == b.from && to == b.to;
}

bool same(const DistributorGroup& a, const DistributorGroup& b) {
  const auto& [pipelines, policy, weights, unit] = a;
  return pipelines == b.pipelines && policy == b.policy && weights == b.weights && unit == b.unit;
}

bool same(const DistributorConfig& a, const DistributorConfig& b);

template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return false;
  return true;
}

bool same(const DistributorConfig& a, const DistributorConfig& b) {
  const auto& [kind, groups] = a;
  return kind == b.kind && same(groups, b.groups);
}

}  // namespace

bool same_configuration(const Configuration& a, const Configuration& b) {
  const auto& [name, teams, helpers, work, threads, distributor] = a;
  return name == b.name && same(teams, b.teams) && same(helpers, b.helpers) && same(work, b.work) &&
         same(threads, b.threads) && same(distributor, b.distributor);
}

bool ValidationMemo::holds(const Configuration& configuration, const Bundle& bundle) const {
  if (!valid_ || bundle.name() != bundle_name_ || bundle.size() != routines_.size()) return false;
  for (std::size_t i = 0; i < routines_.size(); ++i) {
    const ActionRoutine& r = bundle.routines()[i];
    if (r.name() != routines_[i].name() || r.declaration() != routines_[i].declaration()) return false;
  }
  return same_configuration(configuration, configuration_);
}

void ValidationMemo::remember(const Configuration& configuration, const Bundle& bundle) {
  valid_ = false;
  kept_distributor_ = KeptDistributor{};
  configuration_ = configuration;
  bundle_name_ = bundle.name();
  routines_ = bundle.routines();
  declared_.clear();
  for (const auto& t : configuration.teams) declared_.push_back(t.name);
  for (const auto& h : configuration.helpers) declared_.push_back(h.name);
  wait_order_ = detail::wait_order(configuration, declared_);
  valid_ = true;
}

}  // namespace korch::detail
