// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How long each pipeline of a distributor group took in a cycle: from the start of distribution to
// the end of the cycle for the last node the pipeline feeds (its entry and everything downstream of
// it along work edges and routers). What a throughput group's shares follow
// (docs/configurations.md, "Distribution by throughput").
#pragma once

#include <korch/configuration.hpp>
#include <korch/runtime.hpp>

#include <chrono>
#include <vector>

namespace korch::detail {

// Seconds per pipeline of `group`, in its order; 0 for a pipeline none of whose nodes reports an end
// after `since`.
std::vector<double> pipeline_seconds(const Configuration& c, const DistributorGroup& group,
                                     const std::vector<NodeReport>& reports,
                                     std::chrono::steady_clock::time_point since);

}  // namespace korch::detail
