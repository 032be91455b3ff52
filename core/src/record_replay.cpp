// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/action_metadata.hpp>
#include <korch/block.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/data_packet.hpp>
#include <korch/error.hpp>
#include <korch/helper.hpp>
#include <korch/record_replay.hpp>
#include <korch/runtime.hpp>
#include <korch/tile.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <deque>

namespace korch {

std::string item_key(const DataItem& item) {
  if (auto* t = dynamic_cast<const Tile*>(&item)) return fmt::format("tile {}.{}", t->block_id(), t->tile_index());
  if (auto* b = dynamic_cast<const Block*>(&item)) return fmt::format("block {}", b->block_id());
  if (auto* m = dynamic_cast<const ActionMetadata*>(&item)) return fmt::format("metadata {}", m->block_id());
  if (auto* p = dynamic_cast<const DataPacket*>(&item)) {
    std::string s = std::string(to_string(p->data_type())) + "[";
    for (std::size_t i = 0; i < p->size(); ++i) {
      s += (i ? "," : "") + std::to_string(p->entry(i).block);
      if (p->entry(i).tile >= 0) s += "." + std::to_string(p->entry(i).tile);
    }
    return s + "]";
  }
  return item.describe();
}

std::vector<std::string> Recording::order_of(const std::string& node) const {
  std::vector<std::string> out;
  for (const auto& t : tasks)
    if (t.node == node) out.push_back(t.item);
  return out;
}

std::string Recording::to_json() const {
  using nlohmann::json;
  json doc;
  doc["configuration"] = json::parse(configuration);
  doc["teams"] = json::array();
  for (const auto& t : teams)
    doc["teams"].push_back(
        {{"name", t.name}, {"mode", t.mode}, {"n_max", t.n_max}, {"initial_threads", t.initial_threads}});
  doc["pushes"] = json::array();
  for (const auto& p : pushes) doc["pushes"].push_back({{"pipeline", p.pipeline}, {"item", p.item}});
  doc["tasks"] = json::array();
  for (const auto& t : tasks)
    doc["tasks"].push_back({{"sequence", t.sequence}, {"node", t.node}, {"item", t.item}, {"thread", t.thread}});
  return doc.dump(1);
}

Recording Recording::from_json(const std::string& text) {
  using nlohmann::json;
  Recording r;
  try {
    const json doc = json::parse(text);
    r.configuration = doc.at("configuration").dump();
    for (const auto& t : doc.at("teams"))
      r.teams.push_back({t.at("name").get<std::string>(), t.at("mode").get<std::string>(),
                         t.at("n_max").get<unsigned>(), t.at("initial_threads").get<unsigned>()});
    for (const auto& p : doc.at("pushes"))
      r.pushes.push_back({p.at("pipeline").get<std::string>(), p.at("item").get<std::string>()});
    for (const auto& t : doc.at("tasks"))
      r.tasks.push_back({t.at("sequence").get<std::uint64_t>(), t.at("node").get<std::string>(),
                         t.at("item").get<std::string>(), t.at("thread").get<unsigned>()});
  } catch (const json::exception& e) {
    throw Error::format("recording: not a korch recording ({}): write it with Recording::to_json()", e.what());
  }
  return r;
}

void Recorder::begin(std::string configuration, std::vector<RecordedTeamState> teams) {
  std::lock_guard<std::mutex> lock(mutex_);
  recording_ = Recording{};
  recording_.configuration = std::move(configuration);
  recording_.teams = std::move(teams);
  sequence_.store(0);
}

void Recorder::push(const std::string& pipeline, const DataItem& item) {
  auto key = item_key(item);
  std::lock_guard<std::mutex> lock(mutex_);
  recording_.pushes.push_back({pipeline, std::move(key)});
}

void Recorder::task(const std::string& node, const DataItem& item, unsigned thread) {
  auto key = item_key(item);
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t seq = sequence_.fetch_add(1) + 1;
  recording_.tasks.push_back({seq, node, std::move(key), thread});
}

Recording Recorder::recording() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Recording r = recording_;
  std::sort(r.tasks.begin(), r.tasks.end(), [](const auto& a, const auto& b) { return a.sequence < b.sequence; });
  return r;
}

namespace {
std::shared_ptr<DataItem> make_item(const DataSource& grid, const std::string& key) {
  int b = 0, t = 0;
  if (std::sscanf(key.c_str(), "tile %d.%d", &b, &t) == 2) return std::make_shared<Tile>(grid, b, t);
  if (std::sscanf(key.c_str(), "block %d", &b) == 1) return std::make_shared<Block>(grid, b);
  if (std::sscanf(key.c_str(), "metadata %d", &b) == 1) return std::make_shared<ActionMetadata>(b);
  throw Error::format("replay: cannot make the distributor's item '{}' again: the recording is damaged", key);
}
}  // namespace

Recording replay(const Recording& recording, const Bundle& bundle, DataSource& grid, Runtime& runtime) {
  const Configuration c = Configuration::from_json(recording.configuration);
  validate(c, runtime.shape(), &bundle);
  std::map<std::string, std::deque<std::shared_ptr<DataItem>>> inbox;
  std::map<std::string, std::string> next;
  for (const auto& e : c.work) next[e.to.empty() ? e.from : e.from] = e.to;
  std::map<std::string, std::unique_ptr<Helper>> helpers;
  for (const auto& h : c.helpers)
    helpers[h.name] = std::make_unique<Helper>(h, grid, runtime.pinned_pool(), runtime.device_pool());
  std::map<std::string, std::string> publisher;  // helper-or-team feeding a node (helpers only need it)
  for (const auto& e : c.work) publisher[e.to] = e.from;
  // A router pushes into its subscribers' inboxes; the recording holds the distributor's pushes only.
  for (const auto& h : c.helpers) {
    if (h.kind != HelperKind::router) continue;
    std::array<Helper::Push, 2> pushes;
    for (std::size_t i = 0; i < 2; ++i) {
      publisher[h.to[i]] = h.name;
      pushes[i] = [&inbox, to = h.to[i]](std::shared_ptr<DataItem> item) { inbox[to].push_back(std::move(item)); };
    }
    helpers.at(h.name)->route_to(std::move(pushes));
  }

  for (const auto& p : recording.pushes) inbox[p.pipeline].push_back(make_item(grid, p.item));

  ThreadSpaces spaces;
  Recorder out;
  out.begin(recording.configuration, recording.teams);
  // Each node's routine, as its team runs it: outputs are the item or what the routine emitted.
  std::map<std::string, ActionRoutine> routines;
  for (const auto& t : c.teams) routines[t.name] = *bundle.find(t.action);
  for (auto& [name, h] : helpers) routines[name] = h->routine(nullptr);
  std::map<std::string, bool> ended;  // end-of-cycle step done
  auto forward = [&](const std::string& from, ActionContext::Outputs& outputs) {
    auto it = next.find(from);
    if (it != next.end())
      for (auto& item : outputs) inbox[it->second].push_back(std::move(item));
    outputs.clear();
  };
  auto end_cycle = [&](const std::string& node) {
    const ActionRoutine& r = routines.at(node);
    if (ended[node] || !r.has_end_of_cycle()) return;
    ended[node] = true;
    ActionContext::Outputs outputs;
    ActionContext ctx(0, node, 0, 1, spaces, bundle.parameters(), &outputs);
    r.end_of_cycle(ctx);
    forward(node, outputs);
  };
  for (const auto& task : recording.tasks) {
    auto& q = inbox[task.node];
    auto find = [&]() {
      return std::find_if(q.begin(), q.end(), [&](const auto& item) { return item_key(*item) == task.item; });
    };
    auto it = find();
    if (it == q.end() && publisher.count(task.node)) {
      end_cycle(publisher[task.node]);  // the item may be an aggregator's last, partial packet
      it = find();
    }
    if (it == q.end()) {
      throw Error::format(
          "replay diverged at task {}: '{}' is not waiting at '{}': the routines or the grid differ from "
          "the recorded run",
          task.sequence, task.item, task.node);
    }
    std::shared_ptr<DataItem> item = *it;
    q.erase(it);
    const ActionRoutine& routine = routines.at(task.node);
    ActionContext::Outputs outputs;
    ActionContext ctx(0, task.node, task.thread, 1, spaces, bundle.parameters(), routine.emits() ? &outputs : nullptr);
    out.task(task.node, *item, task.thread);
    routine(ctx, *item);
    if (!routine.emits()) outputs.push_back(std::move(item));
    forward(task.node, outputs);
  }
  for (const auto& [name, r] : routines) end_cycle(name);
  return out.recording();
}

}  // namespace korch
