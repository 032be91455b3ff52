// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Measured costs for the forecasting scheduler (docs/planner.md, "Dynamic mode"): the runtime's
// trace of a bundle turned into seconds per block for each action on the host and on devices, and
// an operation whose declarations carry them as measured costs, so that the scheduler plans from
// what ran rather than from the hints.
#pragma once

#include <korch/data_source.hpp>
#include <korch/plan/cost_model.hpp>
#include <korch/plan/operation.hpp>
#include <korch/plan/plan.hpp>
#include <korch/trace.hpp>

#include <map>
#include <string>
#include <vector>

namespace korch::plan {

struct MeasuredCost {
  double host = 0.0;  // seconds per block; 0: not measured
  double device = 0.0;
};

class CostMeasurement {
 public:
  // Adds the "task" events of one execution of `bundle` over `source`. A task is one stage applied to
  // one item: its time over the blocks the item covers (a tile: 1/tiles_per_block) is one sample of
  // seconds per block, and a fused stage's time is shared among its actions in proportion to their
  // costs in `model` (`actions` holds their declarations).
  void add(const PlannedBundle& bundle, const std::vector<TraceEvent>& events, const DataSource& source,
           const std::vector<ActionDeclaration>& actions, const CostModel& model);
  // Seconds per block of each action measured since the last clear(): the median sample, so that a
  // task preempted midway (threads outnumber cores) does not make its action look heavy.
  std::map<std::string, MeasuredCost> costs() const;
  void clear() {
    samples_[0].clear();
    samples_[1].clear();
  }

 private:
  std::map<std::string, std::vector<double>> samples_[2];  // [0] host, [1] device
};

// `operation` with every action's measured costs set: measured where `measured` has them; where a
// side was never measured, the model's cost times the seconds per cost unit of all measurements (the
// forecast). Unchanged when nothing was measured.
Operation with_measured_costs(const Operation& operation, const std::map<std::string, MeasuredCost>& measured,
                              const CostModel& model);

}  // namespace korch::plan
