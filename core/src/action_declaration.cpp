// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "json_input.hpp"

#include <korch/action_declaration.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>

#include <nlohmann/json.hpp>

#include <climits>
#include <set>

namespace korch {

using nlohmann::json;

const char* to_string(DeclaredDataType type) noexcept {
  switch (type) {
    case DeclaredDataType::tile: return "tile";
    case DeclaredDataType::block: return "block";
    case DeclaredDataType::packet: return "packet";
  }
  return "?";
}

const char* to_string(IteratorKind kind) noexcept {
  switch (kind) {
    case IteratorKind::all_blocks: return "all_blocks";
    case IteratorKind::leaves: return "leaves";
    case IteratorKind::level: return "level";
  }
  return "?";
}

std::string ActionIterator::describe() const {
  return kind == IteratorKind::level ? "level " + std::to_string(level) : std::string(to_string(kind));
}

bool ActionDeclaration::reads_variable(const std::string& v) const noexcept { return stencil_of(v) >= 0; }

bool ActionDeclaration::writes_variable(const std::string& v) const noexcept {
  for (const auto& w : writes)
    if (w == v) return true;
  return false;
}

int ActionDeclaration::stencil_of(const std::string& v) const noexcept {
  int widest = -1;
  for (const auto& r : reads)
    if (r.variable == v && r.stencil > widest) widest = r.stencil;
  return widest;
}

void ActionDeclaration::check() const {
  if (action.empty()) throw Error("an action declaration needs a non-empty field name");
  auto fail = [this](const std::string& field, const std::string& what) {
    return Error::format("action '{}': field {}: {}", excerpt(action), field, what);
  };
  if (hints.host_only && hints.device_only) throw fail("hints", "host_only and device_only contradict: keep one");
  if (hints.short_running && hints.heavy) throw fail("hints", "short and heavy contradict: keep one");
  const double costs[] = {hints.host_cost, hints.device_cost, hints.measured_host, hints.measured_device};
  for (double c : costs)
    if (!(c >= 0.0)) throw fail("hints", "costs must be non-negative numbers");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const std::string field = "reads[" + std::to_string(i) + "]";
    if (reads[i].variable.empty()) throw fail(field + ".variable", "empty variable name");
    if (reads[i].stencil < 0) throw fail(field + ".stencil", "must be 0 (pointwise) or a guard-cell width");
    if (!seen.insert(reads[i].variable).second)
      throw fail(field, "variable '" + reads[i].variable + "' is read twice: list it once");
  }
  seen.clear();
  for (std::size_t i = 0; i < writes.size(); ++i) {
    const std::string field = "writes[" + std::to_string(i) + "]";
    if (writes[i].empty()) throw fail(field, "empty variable name");
    if (!seen.insert(writes[i]).second)
      throw fail(field, "variable '" + writes[i] + "' is written twice: list it once");
    if (stencil_of(writes[i]) > 0) {
      throw fail(field, "variable '" + writes[i] +
                            "' is also read with a stencil: its neighbours would depend on the "
                            "order of items; write the result to another variable");
    }
  }
  if (iterator.kind == IteratorKind::level && iterator.level < 0) throw fail("iterator.level", "must be >= 0");
}

namespace {

struct Reader {
  std::string action;
  Error fail(const std::string& field, const std::string& what) const {
    return Error::format("action '{}': field {}: {}", action.empty() ? std::string("?") : excerpt(action), field, what);
  }
  std::string string(const json& j, const std::string& field) const {
    if (!j.is_string()) throw fail(field, "expected a string, got " + json_input::excerpt(j));
    return j.get<std::string>();
  }
  bool boolean(const json& j, const std::string& field) const {
    if (!j.is_boolean()) throw fail(field, "expected true or false, got " + json_input::excerpt(j));
    return j.get<bool>();
  }
  double number(const json& j, const std::string& field) const {
    if (!j.is_number()) throw fail(field, "expected a number, got " + json_input::excerpt(j));
    return j.get<double>();
  }
  int integer(const json& j, const std::string& field) const {
    if (!j.is_number_integer()) throw fail(field, "expected an integer, got " + json_input::excerpt(j));
    // Read wide and range-checked, so that 5000000000 is an error rather than a wrapped int.
    const bool fits = j.is_number_unsigned() ? j.get<unsigned long long>() <= static_cast<unsigned long long>(INT_MAX)
                                             : j.get<long long>() >= INT_MIN && j.get<long long>() <= INT_MAX;
    if (!fits) throw fail(field, "integer " + json_input::excerpt(j) + " is out of range");
    return static_cast<int>(j.get<long long>());
  }
  void only(const json& j, const std::string& field, std::initializer_list<const char*> keys) const {
    for (const auto& item : j.items()) {
      bool known = false;
      for (const char* k : keys) known = known || item.key() == k;
      if (!known) throw fail(field.empty() ? item.key() : field + "." + item.key(), "unknown field");
    }
  }
};

}  // namespace

namespace {

// "reads" and "writes": the variables, each read with its stencil width.
void read_variables(Reader& in, const json& j, ActionDeclaration& d) {
  if (j.contains("reads")) {
    if (!j["reads"].is_array()) throw in.fail("reads", "expected an array");
    for (std::size_t i = 0; i < j["reads"].size(); ++i) {
      const json& r = j["reads"][i];
      const std::string field = "reads[" + std::to_string(i) + "]";
      VariableRead read;
      if (r.is_string()) {
        read.variable = r.get<std::string>();
      } else if (r.is_object()) {
        in.only(r, field, {"variable", "stencil"});
        if (!r.contains("variable")) throw in.fail(field + ".variable", "missing");
        read.variable = in.string(r["variable"], field + ".variable");
        if (r.contains("stencil")) read.stencil = in.integer(r["stencil"], field + ".stencil");
      } else {
        throw in.fail(field, "expected a variable name or {\"variable\": ..., \"stencil\": g}");
      }
      d.reads.push_back(read);
    }
  }
  if (j.contains("writes")) {
    if (!j["writes"].is_array()) throw in.fail("writes", "expected an array of variable names");
    for (std::size_t i = 0; i < j["writes"].size(); ++i)
      d.writes.push_back(in.string(j["writes"][i], "writes[" + std::to_string(i) + "]"));
  }
}

// "data_type" and "iterator".
void read_kinds(Reader& in, const json& j, ActionDeclaration& d) {
  if (j.contains("data_type")) {
    const std::string t = in.string(j["data_type"], "data_type");
    if (t == "tile")
      d.data_type = DeclaredDataType::tile;
    else if (t == "block")
      d.data_type = DeclaredDataType::block;
    else if (t == "packet")
      d.data_type = DeclaredDataType::packet;
    else
      throw in.fail("data_type", "unknown '" + t + "' (tile, block or packet)");
  }
  if (j.contains("iterator")) {
    const json& it = j["iterator"];
    if (it.is_object()) {
      in.only(it, "iterator", {"level"});
      if (!it.contains("level")) throw in.fail("iterator", "an object iterator needs \"level\"");
      d.iterator.kind = IteratorKind::level;
      d.iterator.level = in.integer(it["level"], "iterator.level");
    } else {
      const std::string k = in.string(it, "iterator");
      if (k == "leaves")
        d.iterator.kind = IteratorKind::leaves;
      else if (k == "all_blocks")
        d.iterator.kind = IteratorKind::all_blocks;
      else
        throw in.fail("iterator", "unknown '" + k + "' (all_blocks, leaves or {\"level\": L})");
    }
  }
}

// "hints": what the planner may assume of the action, and its cost guesses or measurements.
void read_hints(Reader& in, const json& j, ActionDeclaration& d) {
  if (j.contains("hints")) {
    const json& h = j["hints"];
    if (!h.is_object()) throw in.fail("hints", "expected an object");
    in.only(h, "hints", {"short", "heavy", "host_only", "device_only", "cost", "measured"});
    if (h.contains("short")) d.hints.short_running = in.boolean(h["short"], "hints.short");
    if (h.contains("heavy")) d.hints.heavy = in.boolean(h["heavy"], "hints.heavy");
    if (h.contains("host_only")) d.hints.host_only = in.boolean(h["host_only"], "hints.host_only");
    if (h.contains("device_only")) d.hints.device_only = in.boolean(h["device_only"], "hints.device_only");
    for (const char* group : {"cost", "measured"}) {
      if (!h.contains(group)) continue;
      const std::string field = std::string("hints.") + group;
      const json& c = h[group];
      if (!c.is_object()) throw in.fail(field, "expected {\"host\": x, \"device\": y}");
      in.only(c, field, {"host", "device"});
      const bool measured = std::string(group) == "measured";
      if (c.contains("host"))
        (measured ? d.hints.measured_host : d.hints.host_cost) = in.number(c["host"], field + ".host");
      if (c.contains("device"))
        (measured ? d.hints.measured_device : d.hints.device_cost) = in.number(c["device"], field + ".device");
    }
  }
}

}  // namespace

ActionDeclaration ActionDeclaration::from_json(const std::string& text) {
  const json j = json_input::parse(text, "action declaration");
  Reader in;
  if (!j.is_object()) throw in.fail("(top level)", "expected an object, got " + json_input::excerpt(j));
  if (!j.contains("name")) throw in.fail("name", "missing: every action needs a name");
  ActionDeclaration d;
  d.action = in.action = in.string(j["name"], "name");
  in.only(j, "", {"name", "reads", "writes", "data_type", "iterator", "hints"});
  read_variables(in, j, d);
  read_kinds(in, j, d);
  read_hints(in, j, d);
  d.check();
  return d;
}

std::string ActionDeclaration::to_json() const {
  json j;
  j["name"] = action;
  j["reads"] = json::array();
  for (const auto& r : reads) {
    if (r.stencil == 0)
      j["reads"].push_back(r.variable);
    else
      j["reads"].push_back({{"variable", r.variable}, {"stencil", r.stencil}});
  }
  j["writes"] = writes;
  j["data_type"] = to_string(data_type);
  if (iterator.kind == IteratorKind::level)
    j["iterator"] = {{"level", iterator.level}};
  else
    j["iterator"] = to_string(iterator.kind);
  json h = json::object();
  if (hints.short_running) h["short"] = true;
  if (hints.heavy) h["heavy"] = true;
  if (hints.host_only) h["host_only"] = true;
  if (hints.device_only) h["device_only"] = true;
  if (hints.host_cost > 0 || hints.device_cost > 0)
    h["cost"] = {{"host", hints.host_cost}, {"device", hints.device_cost}};
  if (hints.measured_host > 0 || hints.measured_device > 0)
    h["measured"] = {{"host", hints.measured_host}, {"device", hints.measured_device}};
  j["hints"] = h;
  return j.dump();
}

}  // namespace korch
