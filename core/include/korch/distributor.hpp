// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributors: what the Runtime's calling thread
// runs to feed the pipelines of a configuration with the grid's blocks.
//
// A distributor has groups. Every group gets every block of the grid (action parallel across
// groups: each item exactly once into each group); inside a group each block (or, with unit tile,
// each tile) goes to exactly one pipeline (data parallel), chosen by a fixed fraction (static:
// smooth weighted round robin, deterministic), by queue depth (dynamic: the pipeline whose entry
// queue is shortest relative to its weight) or by throughput (a fixed fraction that observe() sets
// from each pipeline's measured rate between cycles). For each block, the items for all groups are made
// before the first of them is pushed (all copies are made before the first push).
// ActionParallelDistributor and DataParallelDistributor are the two pure cases; a hybrid is a
// Distributor with several groups, one of them data parallel.
#pragma once

#include <korch/block_iterator.hpp>
#include <korch/configuration.hpp>
#include <korch/data_item.hpp>
#include <korch/data_type.hpp>
#include <korch/grid.hpp>
#include <korch/item_cache.hpp>
#include <korch/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace korch {

struct DistributorTarget {
  std::string name;  // the entry node
  DataType type;     // tile, block or action_metadata
  std::function<void(std::shared_ptr<DataItem>)> push;
  std::function<std::size_t()> queue_depth;  // for the queue-depth policy; may be empty (treated as 0)
  // Optional: pushes several items in order in one call (ThreadTeam::enqueue of a vector). When
  // given, the distributor gathers a target's items and pushes them in batches that double in size
  // (1, 2, 4, ... up to kMaxBatch items), so that the first items arrive at once and a cycle over
  // many tiles takes the team's lock a few times instead of once per tile.
  std::function<void(std::vector<std::shared_ptr<DataItem>>)> push_batch;
};

class Distributor {
 public:
  // `targets[g]` are the entries of group g, in the order of config.groups[g].pipelines.
  Distributor(DistributorConfig config, std::vector<std::vector<DistributorTarget>> targets);
  virtual ~Distributor() = default;

  using Counts = std::vector<std::vector<std::size_t>>;  // [group][pipeline]

  // Feeds every block of `grid` (on the calling thread). Returns how many items went to each
  // group's pipelines ([group][pipeline]); the reference holds until the next call.
  // `cache`, when given, supplies the tile and block items (reused across cycles); `order`, when
  // given, the order of the blocks (else ascending ids); every block must come from it once.
  // The smooth round robin of a fixed-fraction group goes on from where the last call left it.
  // When `order` hands out every block in an order of its own (the guard-cell iterator: blocks as
  // their guard cells arrive), a fixed-fraction group of blocks gives each block the pipeline the
  // round robin gives it in id order instead, so a block goes where it went in the last cycle
  // whatever the order (a resident grid's blocks stay on their side: docs/residency.md).
  const Counts& distribute(const DataSource& grid, Trace* trace = nullptr, ItemCache* cache = nullptr,
                           BlockIterator* order = nullptr);
  // The round robin starts afresh, as in a distributor just made: a distributor kept from cycle to
  // cycle then hands out each cycle's blocks as a new one would.
  void restart_round_robin() noexcept;
  // After a cycle: the seconds each pipeline of `group` took to finish what the last distribute()
  // gave it (0 for one that got nothing). A throughput group sets its shares for the next cycles
  // from the rates so measured (docs/configurations.md, "Distribution by throughput"); other
  // groups ignore it. Returns whether the shares changed. A group index the distributor does not
  // have, or a count of times other than its pipelines', is a korch::Error.
  bool observe(std::size_t group, const std::vector<double>& seconds);
  // What a throughput group has learned (its pipelines' rates, 0 where never measured, and its
  // weights), and a new distributor's group starting from it: a runtime that alternates between
  // configurations over the same teams carries the rates from one to the next. resume() ignores
  // another policy's group and a state of another size.
  struct Learned {
    std::vector<double> rates, weights;
  };
  Learned learned(std::size_t group) const { return {rates_.at(group), config_.groups.at(group).weights}; }
  void resume(std::size_t group, const Learned& state);
  // The weights group g's round robin uses now (scaled so that the largest is 1; a throughput
  // group's follow observe()).
  const std::vector<double>& weights(std::size_t group) const { return config_.groups.at(group).weights; }
  const DistributorConfig& config() const noexcept { return config_; }

  static constexpr std::size_t kMaxBatch = 64;

 private:
  using Items = std::vector<std::shared_ptr<DataItem>>;
  template <class Blocks>
  void distribute_blocks(const DataSource& grid, Trace* trace, ItemCache* cache, Blocks& blocks);
  void push_pending(std::size_t group, std::size_t target);
  std::size_t choose(std::size_t group, const std::vector<Items>& pending);
  // The pipeline of group g that the round robin in id order gives `block` (of `n_blocks`).
  std::size_t pipeline_by_id(std::size_t group, int block, int n_blocks);
  DistributorConfig config_;
  std::vector<std::vector<DistributorTarget>> targets_;
  std::vector<std::vector<double>> credit_;
  // Kept between calls so that a cycle allocates none of them: the counts returned, the items made
  // but not pushed yet per [group][target], and the size at which a target's next batch goes out.
  Counts counts_;
  std::vector<std::vector<Items>> pending_;
  std::vector<std::vector<std::size_t>> next_batch_;
  std::vector<std::vector<std::uint16_t>> by_id_;  // per group: pipeline per block id, made once per block count
  bool by_id_order_ = false;                       // this call hands blocks to pipeline_by_id
  // Throughput groups: the blocks (tiles, for a group routing tiles) each pipeline got in the last
  // distribute(), and its measured rate in them per second (0: not measured yet).
  std::vector<std::vector<std::size_t>> shares_;
  std::vector<std::vector<double>> rates_;
};

class ActionParallelDistributor : public Distributor {
 public:
  explicit ActionParallelDistributor(std::vector<DistributorTarget> pipelines);
};

class DataParallelDistributor : public Distributor {
 public:
  DataParallelDistributor(std::vector<DistributorTarget> pipelines, DistributionPolicy policy,
                          std::vector<double> weights = {}, RoutingUnit unit = RoutingUnit::block);
};

}  // namespace korch
