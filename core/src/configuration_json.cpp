// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Configuration::from_json and to_json: the JSON form described in configuration.hpp.
#include "json_input.hpp"

#include <korch/configuration.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <set>
#include <type_traits>

namespace korch {

namespace {

using nlohmann::json;

std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

// Reads fields of one JSON object and names the offending field in every error.
class Reader {
 public:
  Reader(const std::string& config, const json& object, std::string path)
      : config_(config), object_(object), path_(std::move(path)) {
    if (!object_.is_object()) fail("", "expected an object, got " + json_input::excerpt(object_));
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error::format("configuration '{}': field {}: {}", excerpt(config_), field(key), what);
  }
  std::string field(const std::string& key) const {
    if (key.empty()) return path_.empty() ? std::string("(top level)") : path_;
    return path_.empty() ? json_input::shorten(key) : path_ + "." + json_input::shorten(key);
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
    if (!v->is_string()) fail(key, "expected a string, got " + json_input::excerpt(*v));
    return v->get<std::string>();
  }
  // An optional integer field of type T, in [0, T's largest value].
  template <class T>
  T count(const std::string& key, T fallback) {
    const json* v = get(key, false);
    return v ? non_negative<T>(*v, key) : fallback;
  }
  template <class T>
  T non_negative(const json& v, const std::string& key) const {
    static_assert(std::is_integral_v<T>);
    constexpr T hi = std::numeric_limits<T>::max();
    if (!v.is_number_integer()) fail(key, "expected an unsigned integer, got " + json_input::excerpt(v));
    // nlohmann keeps a non-negative integer as unsigned 64 bits, a negative one as signed.
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
      fail(key, fmt::format("{} is out of range: use 0 to {}", v.dump(), hi));
    }
    return static_cast<T>(v.get<std::uint64_t>());
  }
  DataType data_type(const std::string& key, bool required, DataType fallback) {
    const std::string s = string(key, required, to_string(fallback));
    auto t = parse_data_type(s);
    if (!t)
      fail(key, "unknown data type \"" + json_input::shorten(s) +
                    "\": use tile, block, packet_of_blocks, packet_of_tiles or action_metadata");
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
    fail(key, "unknown value \"" + json_input::shorten(s) + "\": use one of " + names);
  }
  const json& array(const std::string& key, bool required) {
    static const json empty = json::array();
    const json* v = get(key, required);
    if (!v) return empty;
    if (!v->is_array()) fail(key, "expected an array, got " + json_input::excerpt(*v));
    return *v;
  }
  // Grid variable indices (the grid's size is checked when the packet is made).
  std::vector<int> variable_indices(const std::string& key) {
    std::vector<int> out;
    const json& a = array(key, false);
    for (std::size_t i = 0; i < a.size(); ++i) out.push_back(non_negative<int>(a[i], at(key, i)));
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

// A router's fields: "fraction" (a number in [0, 1]) and "to" (its two subscribers), both required,
// and "unit" (block or tile, default block). Other helpers may not carry them.
void read_route(Reader& r, HelperConfig& h) {
  const bool router = h.kind == HelperKind::router;
  for (const char* key : {"fraction", "to", "unit"}) {
    if (!router && r.get(key, false)) {
      r.fail(key, std::string("only a router helper takes this field: remove it or make the helper's kind router"));
    }
  }
  if (!router) return;
  if (const json* f = r.get("fraction", true)) {
    if (!f->is_number() || !(f->get<double>() >= 0.0 && f->get<double>() <= 1.0)) {
      r.fail("fraction", "expected a number from 0 to 1 (the share that goes to the first node of \"to\"), got " +
                             json_input::excerpt(*f));
    }
    h.fraction = f->get<double>();
  }
  const json& to = r.array("to", true);
  if (to.size() != 2) {
    r.fail("to", fmt::format("a router names two subscribers, [\"first\", \"rest\"], got {}", json_input::excerpt(to)));
  }
  for (std::size_t k = 0; k < to.size(); ++k) {
    if (!to[k].is_string()) r.fail(at("to", k), "expected a team or helper name, got " + json_input::excerpt(to[k]));
    h.to.push_back(to[k].get<std::string>());
  }
  static const RoutingUnit units[] = {RoutingUnit::block, RoutingUnit::tile};
  h.unit = r.choice("unit", false, RoutingUnit::block, units);
}

// One entry of "teams".
TeamConfig read_team(const std::string& label, const json& object, const std::string& path) {
  Reader r(label, object, path);
  TeamConfig t;
  t.name = r.string("name", true);
  t.type = r.data_type("type", true, DataType::tile);
  t.action = r.string("action", true);
  t.initial_threads = r.count<unsigned>("threads", 1);
  r.finish();
  return t;
}

// A helper's "variables": the grid variables its packets copy, the scratch ones they carry and the
// face variables they copy.
void read_variables(const std::string& label, const json& object, const std::string& path, HelperConfig& h) {
  Reader vr(label, object, path);
  h.variables.copy_in = vr.variable_indices("copy_in");
  h.variables.copy_in_out = vr.variable_indices("copy_in_out");
  h.variables.copy_out = vr.variable_indices("copy_out");
  h.variables.scratch = vr.count<int>("scratch", 0);
  h.variables.face_copy_in = vr.variable_indices("face_copy_in");
  h.variables.face_copy_in_out = vr.variable_indices("face_copy_in_out");
  h.variables.face_copy_out = vr.variable_indices("face_copy_out");
  vr.finish();
}

// One entry of "helpers".
HelperConfig read_helper(const std::string& label, const json& object, const std::string& path) {
  Reader r(label, object, path);
  HelperConfig h;
  h.name = r.string("name", true);
  static const HelperKind kinds[] = {HelperKind::mover,
                                     HelperKind::unpacker,
                                     HelperKind::splitter,
                                     HelperKind::aggregator,
                                     HelperKind::mover_unpacker,
                                     HelperKind::mover_unpacker_splitter,
                                     HelperKind::aggregator_mover,
                                     HelperKind::router};
  h.kind = r.choice("kind", true, HelperKind::mover, kinds);
  h.input = r.data_type("input", true, DataType::packet_of_blocks);
  h.output = r.data_type("output", false, h.input);
  h.threads = r.count<unsigned>("threads", 1);
  static const MoveDirection dirs[] = {MoveDirection::host_to_device, MoveDirection::device_to_host,
                                       MoveDirection::device_to_device};
  h.direction = r.choice("direction", false, MoveDirection::host_to_device, dirs);
  h.packet_blocks = r.count<std::size_t>("packet_blocks", 4);
  if (const json* v = r.get("variables", false)) read_variables(label, *v, path + ".variables", h);
  read_route(r, h);
  r.finish();
  return h;
}

// One entry of "distributor.groups".
DistributorGroup read_distributor_group(const std::string& label, const json& object, const std::string& path) {
  Reader g(label, object, path);
  DistributorGroup group;
  const json& p = g.array("pipelines", true);
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (!p[k].is_string())
      g.fail(at("pipelines", k), "expected a team or helper name, got " + json_input::excerpt(p[k]));
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
    static const DistributionPolicy policies[] = {DistributionPolicy::fixed_fraction, DistributionPolicy::queue_depth,
                                                  DistributionPolicy::throughput};
    group.policy = g.choice("policy", false, DistributionPolicy::fixed_fraction, policies);
  }
  const json& w = g.array("weights", false);
  for (std::size_t k = 0; k < w.size(); ++k) {
    if (!w[k].is_number() || w[k].get<double>() <= 0.0) {
      g.fail(at("weights", k), "expected a positive number, got " + json_input::excerpt(w[k]));
    }
    group.weights.push_back(w[k].get<double>());
  }
  static const RoutingUnit units[] = {RoutingUnit::block, RoutingUnit::tile};
  group.unit = g.choice("unit", false, RoutingUnit::block, units);
  g.finish();
  return group;
}

// The "distributor" object.
DistributorConfig read_distributor(const std::string& label, const json& object) {
  Reader r(label, object, "distributor");
  DistributorConfig d;
  static const DistributorKind kinds[] = {DistributorKind::action_parallel, DistributorKind::data_parallel,
                                          DistributorKind::hybrid};
  d.kind = r.choice("kind", true, DistributorKind::action_parallel, kinds);
  const json& groups = r.array("groups", true);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    d.groups.push_back(read_distributor_group(label, groups[i], at("distributor.groups", i)));
  }
  r.finish();
  return d;
}

}  // namespace

Configuration Configuration::from_json(const std::string& text) {
  const json doc = json_input::parse(text, "configuration");
  Configuration c;
  std::string label = "?";
  if (doc.is_object() && doc.contains("name") && doc["name"].is_string()) {
    label = json_input::shorten(doc["name"].get_ref<const std::string&>());
  }
  Reader top(label, doc, "");
  c.name = top.string("name", true);

  const json& teams = top.array("teams", true);
  for (std::size_t i = 0; i < teams.size(); ++i) c.teams.push_back(read_team(label, teams[i], at("teams", i)));
  const json& helpers = top.array("helpers", false);
  for (std::size_t i = 0; i < helpers.size(); ++i) {
    c.helpers.push_back(read_helper(label, helpers[i], at("helpers", i)));
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
  c.distributor = read_distributor(label, *top.get("distributor", true));
  top.finish();
  return c;
}

std::string Configuration::to_json() const {
  json doc;
  doc["name"] = name;
  doc["teams"] = json::array();
  for (const auto& t : teams) {
    doc["teams"].push_back(
        {{"name", t.name}, {"type", to_string(t.type)}, {"action", t.action}, {"threads", t.initial_threads}});
  }
  doc["helpers"] = json::array();
  for (const auto& h : helpers) {
    json j{{"name", h.name},
           {"kind", to_string(h.kind)},
           {"input", to_string(h.input)},
           {"output", to_string(h.output)},
           {"threads", h.threads},
           {"direction", to_string(h.direction)},
           {"packet_blocks", h.packet_blocks}};
    j["variables"] = {{"copy_in", h.variables.copy_in},
                      {"copy_in_out", h.variables.copy_in_out},
                      {"copy_out", h.variables.copy_out},
                      {"scratch", h.variables.scratch}};
    const auto add_faces = [&](const char* key, const std::vector<int>& faces) {
      if (!faces.empty()) j["variables"][key] = faces;
    };
    add_faces("face_copy_in", h.variables.face_copy_in);
    add_faces("face_copy_in_out", h.variables.face_copy_in_out);
    add_faces("face_copy_out", h.variables.face_copy_out);
    if (h.kind == HelperKind::router) {
      j["fraction"] = h.fraction;
      j["to"] = h.to;
      j["unit"] = to_string(h.unit);
    }
    doc["helpers"].push_back(j);
  }
  for (const char* key : {"work", "threads"}) {
    doc[key] = json::array();
    for (const auto& e : (std::string(key) == "work" ? work : threads))
      doc[key].push_back({{"from", e.from}, {"to", e.to}});
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
