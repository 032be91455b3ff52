#include <korch/bundle.hpp>
#include <korch/configuration.hpp>
#include <korch/error.hpp>

#include <nlohmann/json.hpp>

#include <set>

namespace korch {

const char* to_string(HelperKind kind) noexcept {
  switch (kind) {
    case HelperKind::mover: return "mover";
    case HelperKind::unpacker: return "unpacker";
    case HelperKind::splitter: return "splitter";
    case HelperKind::aggregator: return "aggregator";
    case HelperKind::mover_unpacker: return "mover_unpacker";
    case HelperKind::mover_unpacker_splitter: return "mover_unpacker_splitter";
    case HelperKind::aggregator_mover: return "aggregator_mover";
  }
  return "?";
}
const char* to_string(MoveDirection d) noexcept {
  switch (d) {
    case MoveDirection::host_to_device: return "host_to_device";
    case MoveDirection::device_to_host: return "device_to_host";
    case MoveDirection::device_to_device: return "device_to_device";
  }
  return "?";
}
const char* to_string(DistributorKind k) noexcept {
  switch (k) {
    case DistributorKind::action_parallel: return "action_parallel";
    case DistributorKind::data_parallel: return "data_parallel";
    case DistributorKind::hybrid: return "hybrid";
  }
  return "?";
}
const char* to_string(DistributionPolicy p) noexcept {
  return p == DistributionPolicy::fixed_fraction ? "fixed_fraction" : "queue_depth";
}
const char* to_string(RoutingUnit u) noexcept { return u == RoutingUnit::block ? "block" : "tile"; }

Bundle& Bundle::add(ActionRoutine routine) {
  if (!routine || routine.name().empty()) {
    throw Error::format("bundle '{}': a routine needs a name and a function", name_);
  }
  if (find(routine.name())) {
    throw Error::format("bundle '{}' already has a routine '{}': give each routine its own name", name_, routine.name());
  }
  routines_.push_back(std::move(routine));
  return *this;
}

const ActionRoutine* Bundle::find(const std::string& routine_name) const noexcept {
  for (const auto& r : routines_)
    if (r.name() == routine_name) return &r;
  return nullptr;
}

const TeamConfig* Configuration::find_team(const std::string& n) const noexcept {
  for (const auto& t : teams)
    if (t.name == n) return &t;
  return nullptr;
}
const HelperConfig* Configuration::find_helper(const std::string& n) const noexcept {
  for (const auto& h : helpers)
    if (h.name == n) return &h;
  return nullptr;
}

namespace {

using nlohmann::json;

// Reads fields of one JSON object and names the offending field in every error.
class Reader {
 public:
  Reader(const std::string& config, const json& object, std::string path)
      : config_(config), object_(object), path_(std::move(path)) {
    if (!object_.is_object()) fail("", "expected an object, got " + object_.dump());
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error::format("configuration '{}': field {}: {}", config_, field(key), what);
  }
  std::string field(const std::string& key) const {
    if (key.empty()) return path_.empty() ? std::string("(top level)") : path_;
    return path_.empty() ? key : path_ + "." + key;
  }
  const json* get(const std::string& key, bool required) {
    seen_.insert(key);
    auto it = object_.find(key);
    if (it == object_.end()) {
      if (required) fail(key, "missing: this field is required");
      return nullptr;
    }
    return &*it;
  }
  std::string string(const std::string& key, bool required, std::string fallback = {}) {
    const json* v = get(key, required);
    if (!v) return fallback;
    if (!v->is_string()) fail(key, "expected a string, got " + v->dump());
    return v->get<std::string>();
  }
  unsigned unsigned_int(const std::string& key, unsigned fallback) {
    const json* v = get(key, false);
    if (!v) return fallback;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<long long>() >= 0)) {
      fail(key, "expected an unsigned integer, got " + v->dump());
    }
    return v->get<unsigned>();
  }
  DataType data_type(const std::string& key, bool required, DataType fallback) {
    const std::string s = string(key, required, to_string(fallback));
    auto t = parse_data_type(s);
    if (!t) fail(key, "unknown data type \"" + s + "\": use tile, block, packet_of_blocks, packet_of_tiles or action_metadata");
    return *t;
  }
  template <class E, std::size_t N>
  E choice(const std::string& key, bool required, E fallback, const E (&values)[N]) {
    const std::string s = string(key, required, to_string(fallback));
    std::string names;
    for (E e : values) {
      if (s == to_string(e)) return e;
      names += (names.empty() ? "" : ", ") + std::string(to_string(e));
    }
    fail(key, "unknown value \"" + s + "\": use one of " + names);
  }
  const json& array(const std::string& key, bool required) {
    static const json empty = json::array();
    const json* v = get(key, required);
    if (!v) return empty;
    if (!v->is_array()) fail(key, "expected an array, got " + v->dump());
    return *v;
  }
  std::vector<int> ints(const std::string& key) {
    std::vector<int> out;
    const json& a = array(key, false);
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_number_integer()) fail(key + "[" + std::to_string(i) + "]", "expected an integer, got " + a[i].dump());
      out.push_back(a[i].get<int>());
    }
    return out;
  }
  // Unknown keys are errors (a misspelt key would otherwise be ignored silently).
  void finish() const {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      if (!seen_.count(it.key())) fail(it.key(), "unknown field: check its spelling");
    }
  }

 private:
  const std::string& config_;
  const json& object_;
  std::string path_;
  std::set<std::string> seen_;
};

std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

}  // namespace

Configuration Configuration::from_json(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error::format("configuration: not valid JSON ({}): fix the text at byte {}", e.what(), e.byte);
  }
  Configuration c;
  std::string label = "?";
  if (doc.is_object() && doc.contains("name") && doc["name"].is_string()) label = doc["name"].get<std::string>();
  Reader top(label, doc, "");
  c.name = top.string("name", true);

  const json& teams = top.array("teams", true);
  for (std::size_t i = 0; i < teams.size(); ++i) {
    Reader r(label, teams[i], at("teams", i));
    TeamConfig t;
    t.name = r.string("name", true);
    t.type = r.data_type("type", true, DataType::tile);
    t.action = r.string("action", true);
    t.initial_threads = r.unsigned_int("threads", 1);
    r.finish();
    c.teams.push_back(t);
  }
  const json& helpers = top.array("helpers", false);
  for (std::size_t i = 0; i < helpers.size(); ++i) {
    Reader r(label, helpers[i], at("helpers", i));
    HelperConfig h;
    h.name = r.string("name", true);
    static const HelperKind kinds[] = {HelperKind::mover, HelperKind::unpacker, HelperKind::splitter,
                                       HelperKind::aggregator, HelperKind::mover_unpacker,
                                       HelperKind::mover_unpacker_splitter, HelperKind::aggregator_mover};
    h.kind = r.choice("kind", true, HelperKind::mover, kinds);
    h.input = r.data_type("input", true, DataType::packet_of_blocks);
    h.output = r.data_type("output", false, h.input);
    h.threads = r.unsigned_int("threads", 1);
    static const MoveDirection dirs[] = {MoveDirection::host_to_device, MoveDirection::device_to_host,
                                         MoveDirection::device_to_device};
    h.direction = r.choice("direction", false, MoveDirection::host_to_device, dirs);
    h.packet_blocks = r.unsigned_int("packet_blocks", 4);
    if (const json* v = r.get("variables", false)) {
      Reader vr(label, *v, at("helpers", i) + ".variables");
      h.variables.copy_in = vr.ints("copy_in");
      h.variables.copy_in_out = vr.ints("copy_in_out");
      h.variables.copy_out = vr.ints("copy_out");
      h.variables.scratch = static_cast<int>(vr.unsigned_int("scratch", 0));
      vr.finish();
    }
    r.finish();
    c.helpers.push_back(h);
  }
  for (const char* key : {"work", "threads"}) {
    const json& edges = top.array(key, false);
    for (std::size_t i = 0; i < edges.size(); ++i) {
      Reader r(label, edges[i], at(key, i));
      Edge e{r.string("from", true), r.string("to", true)};
      r.finish();
      (std::string(key) == "work" ? c.work : c.threads).push_back(e);
    }
  }
  {
    const json* d = top.get("distributor", true);
    Reader r(label, *d, "distributor");
    static const DistributorKind kinds[] = {DistributorKind::action_parallel, DistributorKind::data_parallel,
                                            DistributorKind::hybrid};
    c.distributor.kind = r.choice("kind", true, DistributorKind::action_parallel, kinds);
    const json& groups = r.array("groups", true);
    for (std::size_t i = 0; i < groups.size(); ++i) {
      Reader g(label, groups[i], at("distributor.groups", i));
      DistributorGroup group;
      const json& p = g.array("pipelines", true);
      for (std::size_t k = 0; k < p.size(); ++k) {
        if (!p[k].is_string()) g.fail(at("pipelines", k), "expected a team or helper name, got " + p[k].dump());
        group.pipelines.push_back(p[k].get<std::string>());
      }
      // "static" and "dynamic" are read as the two policies' shorter names; they are written out
      // by their C++ names.
      const std::string policy = g.string("policy", false, "fixed_fraction");
      if (policy == "static") {
        group.policy = DistributionPolicy::fixed_fraction;
      } else if (policy == "dynamic") {
        group.policy = DistributionPolicy::queue_depth;
      } else {
        static const DistributionPolicy policies[] = {DistributionPolicy::fixed_fraction, DistributionPolicy::queue_depth};
        group.policy = g.choice("policy", false, DistributionPolicy::fixed_fraction, policies);
      }
      const json& w = g.array("weights", false);
      for (std::size_t k = 0; k < w.size(); ++k) {
        if (!w[k].is_number() || w[k].get<double>() <= 0.0) {
          g.fail(at("weights", k), "expected a positive number, got " + w[k].dump());
        }
        group.weights.push_back(w[k].get<double>());
      }
      static const RoutingUnit units[] = {RoutingUnit::block, RoutingUnit::tile};
      group.unit = g.choice("unit", false, RoutingUnit::block, units);
      g.finish();
      c.distributor.groups.push_back(group);
    }
    r.finish();
  }
  top.finish();
  return c;
}

std::string Configuration::to_json() const {
  json doc;
  doc["name"] = name;
  doc["teams"] = json::array();
  for (const auto& t : teams) {
    doc["teams"].push_back({{"name", t.name}, {"type", to_string(t.type)}, {"action", t.action}, {"threads", t.initial_threads}});
  }
  doc["helpers"] = json::array();
  for (const auto& h : helpers) {
    json j{{"name", h.name},        {"kind", to_string(h.kind)},    {"input", to_string(h.input)},
           {"output", to_string(h.output)}, {"threads", h.threads}, {"direction", to_string(h.direction)},
           {"packet_blocks", h.packet_blocks}};
    j["variables"] = {{"copy_in", h.variables.copy_in},
                      {"copy_in_out", h.variables.copy_in_out},
                      {"copy_out", h.variables.copy_out},
                      {"scratch", h.variables.scratch}};
    doc["helpers"].push_back(j);
  }
  for (const char* key : {"work", "threads"}) {
    doc[key] = json::array();
    for (const auto& e : (std::string(key) == "work" ? work : threads)) doc[key].push_back({{"from", e.from}, {"to", e.to}});
  }
  json groups = json::array();
  for (const auto& g : distributor.groups) {
    groups.push_back({{"pipelines", g.pipelines},
                      {"policy", to_string(g.policy)},
                      {"weights", g.weights},
                      {"unit", to_string(g.unit)}});
  }
  doc["distributor"] = {{"kind", to_string(distributor.kind)}, {"groups", groups}};
  return doc.dump(2);
}

}  // namespace korch
