// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distribution by throughput: between cycles, a throughput group's shares follow the rates its
// pipelines were measured at (docs/configurations.md, "Distribution by throughput").
#include <korch/distributor.hpp>
#include <korch/error.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace korch {

namespace {

// A new share must shorten the predicted cycle by more than this fraction to replace the shares in
// use: measurements vary from cycle to cycle, and every block that changes side costs a transfer
// on a resident grid.
constexpr double kRequiredGain = 0.25;
// A pipeline's rate is the mean of the one it had and the one just measured: one slow cycle (a
// core taken by another process for a moment) moves half as far.
constexpr double kNewRateWeight = 0.5;

// The time the slowest pipeline needs for `shares` at `rates` (a pipeline without a rate and without
// a share takes none).
double finish_time(const std::vector<std::size_t>& shares, const std::vector<double>& rates) {
  double slowest = 0;
  for (std::size_t i = 0; i < shares.size(); ++i)
    if (shares[i] > 0) slowest = std::max(slowest, static_cast<double>(shares[i]) / rates[i]);
  return slowest;
}

// `total` units shared out so that the last pipeline finishes soonest: each unit in turn goes to the
// pipeline that would finish it first (optimal for units of equal cost). Pipelines without a rate
// get none.
std::vector<std::size_t> fastest_shares(std::size_t total, const std::vector<double>& rates) {
  std::vector<std::size_t> shares(rates.size(), 0);
  for (std::size_t unit = 0; unit < total; ++unit) {
    std::size_t best = rates.size();
    double best_end = 0;
    for (std::size_t i = 0; i < rates.size(); ++i) {
      if (!(rates[i] > 0)) continue;
      const double end = static_cast<double>(shares[i] + 1) / rates[i];
      if (best == rates.size() || end < best_end) {
        best = i;
        best_end = end;
      }
    }
    if (best == rates.size()) break;
    ++shares[best];
  }
  return shares;
}

}  // namespace

bool Distributor::observe(std::size_t group, const std::vector<double>& seconds) {
  if (group >= config_.groups.size()) {
    throw Error::format("distributor: observe() for group {}, but the distributor has {} group(s): pass 0 to {}", group,
                        config_.groups.size(), config_.groups.size() - 1);
  }
  if (config_.groups[group].policy != DistributionPolicy::throughput) return false;
  auto& rates = rates_[group];
  const auto& shares = shares_[group];
  if (seconds.size() != rates.size()) {
    throw Error::format("distributor: observe() got {} times for the {} pipelines of group {}", seconds.size(),
                        rates.size(), group);
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    total += shares[i];
    // A pipeline that got nothing keeps the rate it was last measured at.
    if (shares[i] == 0 || !(seconds[i] > 0)) continue;
    const double measured = static_cast<double>(shares[i]) / seconds[i];
    rates[i] = rates[i] > 0 ? (1.0 - kNewRateWeight) * rates[i] + kNewRateWeight * measured : measured;
  }
  if (total == 0) return false;
  // Pipelines never measured count at the mean rate of those measured, so that they get a share.
  double sum = 0;
  std::size_t measured = 0;
  for (const double r : rates) {
    if (!(r > 0)) continue;
    sum += r;
    ++measured;
  }
  if (measured == 0) return false;
  std::vector<double> expected = rates;
  for (double& r : expected)
    if (!(r > 0)) r = sum / static_cast<double>(measured);
  const std::vector<std::size_t> best = fastest_shares(total, expected);
  if (finish_time(best, expected) >= (1.0 - kRequiredGain) * finish_time(shares, expected)) return false;
  // The round robin restarts every cycle, so weights equal to the shares hand out exactly those
  // shares of `total` units; scaled so that the largest is 1, as the constructor leaves weights.
  const double largest = static_cast<double>(*std::max_element(best.begin(), best.end()));
  auto& w = config_.groups[group].weights;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(best[i]) / largest;
  if (group < by_id_.size()) by_id_[group].clear();  // made again with the new weights
  std::fill(credit_[group].begin(), credit_[group].end(), 0.0);
  return true;
}

void Distributor::resume(std::size_t group, const Learned& state) {
  if (group >= config_.groups.size() || config_.groups[group].policy != DistributionPolicy::throughput) return;
  auto& w = config_.groups[group].weights;
  if (state.rates.size() != w.size() || state.weights.size() != w.size()) return;
  rates_[group] = state.rates;
  w = state.weights;
  if (group < by_id_.size()) by_id_[group].clear();
  std::fill(credit_[group].begin(), credit_[group].end(), 0.0);
}

}  // namespace korch
