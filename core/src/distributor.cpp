// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/action_metadata.hpp>
#include <korch/block.hpp>
#include <korch/distributor.hpp>
#include <korch/error.hpp>
#include <korch/fault_injection.hpp>
#include <korch/tile.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

namespace korch {

Distributor::Distributor(DistributorConfig config, std::vector<std::vector<DistributorTarget>> targets)
    : config_(std::move(config)), targets_(std::move(targets)) {
  if (targets_.size() != config_.groups.size()) {
    throw Error::format("distributor: {} target groups for {} configured groups: give targets for each group",
                        targets_.size(), config_.groups.size());
  }
  for (std::size_t g = 0; g < targets_.size(); ++g) {
    if (targets_[g].empty()) throw Error::format("distributor: group {} has no pipeline", g);
    auto& w = config_.groups[g].weights;
    if (w.empty()) w.assign(targets_[g].size(), 1.0);
    if (w.size() != targets_[g].size()) {
      throw Error::format("distributor: group {} has {} weights for {} pipelines", g, w.size(), targets_[g].size());
    }
    // Scaled so that the largest is 1: their sum (the round robin's credit) then stays finite even
    // for weights near double's largest value.
    double largest = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (!(w[i] > 0) || !std::isfinite(w[i])) {
        throw Error::format("distributor: group {} has weight {} for pipeline '{}': use a positive finite number", g,
                            w[i], targets_[g][i].name);
      }
      largest = std::max(largest, w[i]);
    }
    for (double& weight : w) weight /= largest;
    for (const auto& t : targets_[g]) {
      if (!t.push && !t.push_batch) {
        throw Error::format("distributor: target '{}' of group {} has neither push nor push_batch: give it one", t.name,
                            g);
      }
    }
    credit_.emplace_back(targets_[g].size(), 0.0);
    shares_.emplace_back(targets_[g].size(), 0);
    rates_.emplace_back(targets_[g].size(), 0.0);
    counts_.emplace_back(targets_[g].size(), 0);
    pending_.emplace_back(targets_[g].size());
    next_batch_.emplace_back(targets_[g].size(), 1);
  }
}

void Distributor::restart_round_robin() noexcept {
  for (auto& c : credit_) std::fill(c.begin(), c.end(), 0.0);
}

std::size_t Distributor::pipeline_by_id(std::size_t g, int block, int n_blocks) {
  if (by_id_.size() != targets_.size()) by_id_.resize(targets_.size());
  auto& by_id = by_id_[g];
  if (by_id.size() != static_cast<std::size_t>(n_blocks)) {
    // The credits of this call's own round robin are left as they were.
    const std::vector<double> saved = credit_[g];
    std::fill(credit_[g].begin(), credit_[g].end(), 0.0);
    by_id.resize(static_cast<std::size_t>(n_blocks));
    for (auto& pipeline : by_id) pipeline = static_cast<std::uint16_t>(choose(g, pending_[g]));
    credit_[g] = saved;
  }
  return by_id[static_cast<std::size_t>(block)];
}

std::size_t Distributor::choose(std::size_t g, const std::vector<Items>& pending) {
  const auto& group = config_.groups[g];
  const auto& w = group.weights;
  const std::size_t n = targets_[g].size();
  if (n == 1) return 0;
  std::size_t best = 0;
  if (group.policy == DistributionPolicy::queue_depth) {
    double best_load = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& q = targets_[g][i].queue_depth;
      // Items gathered for a batch but not pushed yet count as queued.
      const double depth = static_cast<double>((q ? q() : 0) + pending[i].size());
      const double load = (depth + 1.0) / w[i];
      if (i == 0 || load < best_load) {
        best = i;
        best_load = load;
      }
    }
    return best;
  }
  double total = 0;
  auto& c = credit_[g];
  for (std::size_t i = 0; i < n; ++i) {
    c[i] += w[i];
    total += w[i];
    if (c[i] > c[best]) best = i;
  }
  c[best] -= total;
  return best;
}

namespace {
using Items = std::vector<std::shared_ptr<DataItem>>;

std::shared_ptr<DataItem> make_tile(const DataSource& grid, ItemCache* cache, int block, int tile) {
  if (cache) return cache->tile(block, tile);
  return std::make_shared<Tile>(grid, block, tile);
}

int tiles_in(const DataSource& source, int block) { return static_cast<int>(source.tiles_of(block).size()); }

void make_items(const DataSource& grid, ItemCache* cache, int block, DataType type, Items& out) {
  switch (type) {
    case DataType::tile:
      for (int t = 0, n = tiles_in(grid, block); t < n; ++t) out.push_back(make_tile(grid, cache, block, t));
      break;
    case DataType::block:
      out.push_back(cache ? std::shared_ptr<DataItem>(cache->block(block)) : std::make_shared<Block>(grid, block));
      break;
    case DataType::action_metadata: out.push_back(std::make_shared<ActionMetadata>(block)); break;
    default:
      throw Error::format(
          "distributor: cannot make {} items from the grid: put an aggregator in front of that pipeline",
          to_string(type));
  }
}
}  // namespace

namespace {

// Blocks in id order, or from the caller's iterator with a check that none comes twice and, for an
// iterator that covers every block, that each comes.
class BlockSequence {
 public:
  BlockSequence(const DataSource& grid, BlockIterator* order) : grid_(grid), order_(order) {
    if (order_) {
      seen_.assign(static_cast<std::size_t>(grid.n_blocks()), false);
      order_->begin(grid);
    }
  }
  // The next block's id, or `none` after the last one. A plain int: the caller tests it once per
  // block, and reading back an optional stored a field at a time stalls the load.
  static constexpr int none = -1;
  int next() {
    if (!order_) return next_ < grid_.n_blocks() ? next_++ : none;
    const auto b = order_->next();
    if (!b) {
      if (order_->covers_every_block() && count_ != grid_.n_blocks())
        throw Error::format(
            "distributor: the block iterator ended after {} of the {}'s {} blocks: it must hand out "
            "every block once",
            count_, grid_.source_name(), grid_.n_blocks());
      return none;
    }
    if (*b < 0 || *b >= grid_.n_blocks())
      throw Error::format("distributor: the block iterator gave block {}, which the {} (blocks 0..{}) does not hold",
                          *b, grid_.source_name(), grid_.n_blocks() - 1);
    if (seen_[static_cast<std::size_t>(*b)])
      throw Error::format("distributor: the block iterator gave block {} twice: it must hand out every block once", *b);
    seen_[static_cast<std::size_t>(*b)] = true;
    ++count_;
    return *b;
  }
  void abandon() noexcept {
    if (order_) order_->abandon();
  }

 private:
  const DataSource& grid_;
  BlockIterator* order_;
  std::vector<bool> seen_;
  int next_ = 0;
  int count_ = 0;
};

}  // namespace

const Distributor::Counts& Distributor::distribute(const DataSource& grid, Trace* trace, ItemCache* cache,
                                                   BlockIterator* order) {
  if (cache) cache->bind(grid);
  for (std::size_t g = 0; g < targets_.size(); ++g) {
    std::fill(counts_[g].begin(), counts_[g].end(), 0);
    std::fill(shares_[g].begin(), shares_[g].end(), 0);
    std::fill(next_batch_[g].begin(), next_batch_[g].end(), 1);
  }
  by_id_order_ = order != nullptr && order->covers_every_block();
  BlockSequence blocks(grid, order);
  try {
    distribute_blocks(grid, trace, cache, blocks);
  } catch (...) {
    // Items made but not pushed go now: none may outlive the cycle that failed.
    for (auto& group : pending_)
      for (auto& items : group) items.clear();
    blocks.abandon();
    throw;
  }
  return counts_;
}

// Pushes the items gathered for target i of group g, in one batch where the target takes them.
void Distributor::push_pending(std::size_t g, std::size_t i) {
  auto& items = pending_[g][i];
  if (items.empty()) return;
  faults::pass(faults::Point::distributor_push);
  counts_[g][i] += items.size();
  const auto& target = targets_[g][i];
  if (target.push_batch) {
    target.push_batch(std::move(items));
    items.clear();
    // The next batch is gathered in one allocation (the target took this one's storage).
    items.reserve(next_batch_[g][i]);
  } else {
    for (auto& item : items) target.push(std::move(item));
    items.clear();
  }
}

template <class Blocks>
void Distributor::distribute_blocks(const DataSource& grid, Trace* trace, ItemCache* cache, Blocks& blocks) {
  // Targets without push_batch get every item at once; the others in batches whose size doubles
  // up to kMaxBatch.
  for (int b = blocks.next(); b != Blocks::none; b = blocks.next()) {
    // Made only when tracing: an unused scope still builds and frees its event's strings per block.
    std::optional<TraceScope> scope;
    if (trace) scope.emplace(trace, "distribute", "distributor", "distributor", 0, "block " + std::to_string(b));
    // Every copy of this block for every group is made first ...
    for (std::size_t g = 0; g < targets_.size(); ++g) {
      auto& pending = pending_[g];
      if (config_.groups[g].unit == RoutingUnit::tile && targets_[g].size() > 1) {
        for (int t = 0, n = tiles_in(grid, b); t < n; ++t) {
          const std::size_t i = choose(g, pending);
          ++shares_[g][i];
          pending[i].push_back(make_tile(grid, cache, b, t));
        }
      } else {
        const bool by_id = by_id_order_ && config_.groups[g].policy != DistributionPolicy::queue_depth;
        const std::size_t i = by_id ? pipeline_by_id(g, b, grid.n_blocks()) : choose(g, pending);
        ++shares_[g][i];
        make_items(grid, cache, b, targets_[g][i].type, pending[i]);
      }
    }
    // ... and then pushed, in batches where the target takes them.
    for (std::size_t g = 0; g < targets_.size(); ++g) {
      for (std::size_t i = 0; i < targets_[g].size(); ++i) {
        auto& next_batch = next_batch_[g][i];
        if (!targets_[g][i].push_batch) {
          push_pending(g, i);
        } else if (pending_[g][i].size() >= next_batch) {
          // The queue-depth policy needs fresh queue depths: its batches stay one block.
          if (config_.groups[g].policy != DistributionPolicy::queue_depth)
            next_batch = std::min(2 * next_batch, kMaxBatch);
          push_pending(g, i);
        }
      }
    }
  }
  for (std::size_t g = 0; g < targets_.size(); ++g)
    for (std::size_t i = 0; i < targets_[g].size(); ++i) push_pending(g, i);
}

namespace {
DistributorConfig action_parallel_config(const std::vector<DistributorTarget>& pipelines) {
  DistributorConfig c;
  c.kind = DistributorKind::action_parallel;
  for (const auto& p : pipelines)
    c.groups.push_back(DistributorGroup{{p.name}, DistributionPolicy::fixed_fraction, {}, RoutingUnit::block});
  return c;
}
std::vector<std::vector<DistributorTarget>> one_each(std::vector<DistributorTarget> pipelines) {
  std::vector<std::vector<DistributorTarget>> t;
  for (auto& p : pipelines) t.push_back({std::move(p)});
  return t;
}
DistributorConfig data_parallel_config(const std::vector<DistributorTarget>& pipelines, DistributionPolicy policy,
                                       std::vector<double> weights, RoutingUnit unit) {
  DistributorConfig c;
  c.kind = DistributorKind::data_parallel;
  DistributorGroup g;
  for (const auto& p : pipelines) g.pipelines.push_back(p.name);
  g.policy = policy;
  g.weights = std::move(weights);
  g.unit = unit;
  c.groups.push_back(g);
  return c;
}
}  // namespace

ActionParallelDistributor::ActionParallelDistributor(std::vector<DistributorTarget> pipelines)
    : Distributor(action_parallel_config(pipelines), one_each(pipelines)) {}

DataParallelDistributor::DataParallelDistributor(std::vector<DistributorTarget> pipelines, DistributionPolicy policy,
                                                 std::vector<double> weights, RoutingUnit unit)
    : Distributor(data_parallel_config(pipelines, policy, std::move(weights), unit), {pipelines}) {}

}  // namespace korch
