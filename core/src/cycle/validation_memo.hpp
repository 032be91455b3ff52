// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The last configuration and bundle a Runtime validated. A code runs the same pair cycle after
// cycle; validating it again would cost more than a cycle of small blocks computes. Validation
// depends only on the configuration, the bundle's routine names and declarations, and the
// runtime's shape (fixed for the runtime's life), so an equal pair needs no new validation. The
// memo also keeps what a cycle derives from the configuration alone (its nodes' order), for the
// same reason.
#pragma once

#include <korch/action_routine.hpp>
#include <korch/bundle.hpp>
#include <korch/configuration.hpp>
#include <korch/distributor.hpp>
#include <korch/record_replay.hpp>
#include <korch/thread_team.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace korch::detail {

class ValidationMemo {
 public:
  // True when `configuration` and `bundle` equal the pair remembered last.
  bool holds(const Configuration& configuration, const Bundle& bundle) const;
  // Remembers a pair that passed validation.
  void remember(const Configuration& configuration, const Bundle& bundle);

  // Of the configuration remembered last: its teams then helpers in declaration order, and the
  // order in which a cycle waits for them (wait_order.hpp).
  const std::vector<std::string>& declared() const noexcept { return declared_; }
  const std::vector<std::string>& wait_order() const noexcept { return wait_order_; }

  // The distributor of the configuration remembered last, kept from cycle to cycle with what its
  // targets push into (the entry teams, in the order of the groups' pipelines) and the recorder
  // they tell: making it anew costs a cycle of small blocks several allocations per target. Empty
  // until a cycle makes one; remember() drops it.
  struct KeptDistributor {
    std::unique_ptr<Distributor> distributor;
    std::vector<ThreadTeam*> entries;
    Recorder* recorder = nullptr;
  };
  KeptDistributor& kept_distributor() noexcept { return kept_distributor_; }
  // What throughput groups learned, by their entry teams: kept for the runtime's life, across
  // configurations, so that a code alternating configurations over the same teams keeps its rates.
  using LearnedThroughput = std::map<std::vector<const ThreadTeam*>, Distributor::Learned>;
  LearnedThroughput& learned_throughput() noexcept { return learned_throughput_; }

 private:
  bool valid_ = false;
  Configuration configuration_;
  std::string bundle_name_;
  // Copies of the bundle's routines: they keep the declarations alive, so a declaration's address
  // identifies its content.
  std::vector<ActionRoutine> routines_;
  std::vector<std::string> declared_;
  std::vector<std::string> wait_order_;
  KeptDistributor kept_distributor_;
  LearnedThroughput learned_throughput_;
};

// Field-by-field equality of configurations. Each struct is unpacked with a structured binding
// naming all its fields: a field added to one of them stops this from compiling until it is compared.
bool same_configuration(const Configuration& a, const Configuration& b);

}  // namespace korch::detail
