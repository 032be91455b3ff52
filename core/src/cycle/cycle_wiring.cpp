// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cycle_wiring.hpp"

#include <fmt/format.h>

namespace korch::detail {

CycleWiring::CycleWiring(const Configuration& c, CycleNodes& nodes, CycleLinks& links) : links_(links) {
  links_.work.clear();
  links_.thread.clear();
  links_.external.clear();
  links_.entries.clear();
  try {
    // Every node hands its outputs on through its team's work subscription (helper.hpp).
    for (const auto& e : c.work) {
      ThreadTeam* from = nodes.at(e.from).team;
      from->attach_work_subscriber(*nodes.at(e.to).team);
      links_.work.push_back(from);
    }
    for (const auto& g : c.distributor.groups) {
      for (const auto& p : g.pipelines) {
        ThreadTeam* t = nodes.at(p).team;
        t->add_external_work_publisher();
        links_.external.push_back(t);
        links_.entries.push_back(t);
      }
    }
    for (const auto& h : c.helpers) {
      if (h.kind != HelperKind::router) continue;
      for (const auto& to : h.to) {
        ThreadTeam* t = nodes.at(to).team;
        t->add_external_work_publisher();
        links_.external.push_back(t);
        router_targets_[h.name].push_back(t);
      }
    }
    for (const auto& e : c.threads) {
      nodes.at(e.from).team->attach_thread_subscriber(*nodes.at(e.to).team);
      links_.thread.push_back(nodes.at(e.from).team);
    }
  } catch (...) {
    CycleErrors ignored;  // the link error itself is what the caller sees
    unwire(ignored);
    throw;
  }
}

CycleWiring::~CycleWiring() {
  if (unwired_) return;
  CycleErrors ignored;  // already failing: the first error is the one reported
  unwire(ignored);
}

void CycleWiring::unwire(CycleErrors& errors) {
  unwired_ = true;
  for (auto* t : links_.work) {
    try {
      t->detach_work_subscriber();
    } catch (...) {
      errors.add(fmt::format("removing the work subscriber of '{}'", t->name()), std::current_exception());
    }
  }
  for (auto* t : links_.thread) {
    try {
      t->detach_thread_subscriber();
    } catch (...) {
      errors.add(fmt::format("removing the thread subscriber of '{}'", t->name()), std::current_exception());
    }
  }
  for (auto* t : links_.external) {
    try {
      t->remove_external_work_publisher();
    } catch (...) {
      errors.add(fmt::format("removing an external work publisher of '{}'", t->name()), std::current_exception());
    }
  }
  links_.work.clear();
  links_.thread.clear();
  links_.external.clear();
}

}  // namespace korch::detail
