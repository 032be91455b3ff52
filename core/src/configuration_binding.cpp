// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Configuration::slots and Configuration::bind_actions: a configuration's action names (its slots)
// replaced by a bundle's, by position or by slot (configuration.hpp, ActionBinding).
#include <korch/configuration.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace korch {

ActionBinding::ActionBinding(std::initializer_list<Name> by_position) : by_position_(true) {
  for (const auto& n : by_position) names_.push_back(n.value);
}
ActionBinding::ActionBinding(std::initializer_list<SlotAction> by_slot) : by_position_(false), pairs_(by_slot) {}
ActionBinding::ActionBinding(const std::vector<std::string>& by_position) : by_position_(true), names_(by_position) {}
ActionBinding::ActionBinding(const std::map<std::string, std::string>& by_slot) : by_position_(false) {
  for (const auto& [slot, action] : by_slot) pairs_.push_back(SlotAction{slot, action});
}

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool feeds(const Configuration& c, const std::string& node) {
  for (const auto& g : c.distributor.groups)
    if (contains(g.pipelines, node)) return true;
  for (const auto& h : c.helpers)
    if (h.kind == HelperKind::router && contains(h.to, node)) return true;
  return false;
}

// A team the configuration runs without: it ends a pipeline that others start, hands no threads on,
// and what feeds it can end the pipeline in its place.
bool droppable(const Configuration& c, const TeamConfig& t) {
  if (feeds(c, t.name)) return false;
  for (const auto& e : c.work) {
    if (e.from == t.name) return false;
    if (e.to != t.name) continue;
    const HelperConfig* h = c.find_helper(e.from);
    if (h ? h->kind != HelperKind::mover_unpacker_splitter : !c.find_team(e.from)) return false;
  }
  for (const auto& e : c.threads)
    if (e.from == t.name) return false;
  return true;
}

std::string slot_list(const std::vector<ActionSlot>& slots) {
  std::string out;
  for (const auto& s : slots)
    out += fmt::format("{}{}{}", out.empty() ? "" : ", ", excerpt(s.name), s.optional ? " (optional)" : "");
  return out.empty() ? std::string("none") : out;
}

// The configuration without the teams of `slot`, which must be droppable.
void drop_slot(Configuration& c, const std::string& slot) {
  std::set<std::string> gone;
  for (const auto& t : c.teams)
    if (t.action == slot) gone.insert(t.name);
  c.teams.erase(
      std::remove_if(c.teams.begin(), c.teams.end(), [&](const TeamConfig& t) { return gone.count(t.name) > 0; }),
      c.teams.end());
  for (const auto& e : c.work) {
    if (!gone.count(e.to)) continue;
    // The packets it unpacked are no longer split into tiles for anyone: it only unpacks them now.
    for (auto& h : c.helpers)
      if (h.name == e.from && h.kind == HelperKind::mover_unpacker_splitter) {
        h.kind = HelperKind::mover_unpacker;
        h.output = h.input;
      }
  }
  const auto touches = [&](const Edge& e) { return gone.count(e.from) > 0 || gone.count(e.to) > 0; };
  c.work.erase(std::remove_if(c.work.begin(), c.work.end(), touches), c.work.end());
  c.threads.erase(std::remove_if(c.threads.begin(), c.threads.end(), touches), c.threads.end());
}

// Slot name -> action name, from either form of the binding, with the binding's own mistakes named.
std::map<std::string, std::string> resolve(const Configuration& c, const std::vector<ActionSlot>& slots,
                                           const ActionBinding& binding) {
  std::map<std::string, std::string> to;
  if (binding.by_position()) {
    const auto& names = binding.names();
    if (names.size() > slots.size()) {
      throw Error::format(
          "configuration '{}' has {} slot{} ({}) but {} action names were given by position: give at most {}, "
          "in slot order",
          excerpt(c.name), slots.size(), slots.size() == 1 ? "" : "s", slot_list(slots), names.size(), slots.size());
    }
    for (std::size_t i = 0; i < names.size(); ++i) to[slots[i].name] = names[i];
  } else {
    for (const auto& p : binding.pairs()) {
      const bool known = std::any_of(slots.begin(), slots.end(), [&](const ActionSlot& s) { return s.name == p.slot; });
      if (!known) {
        throw Error::format("configuration '{}' has no slot '{}' to bind '{}' to: its slots are {}; bind one of those",
                            excerpt(c.name), excerpt(p.slot), excerpt(p.action), slot_list(slots));
      }
      if (auto it = to.find(p.slot); it != to.end()) {
        throw Error::format("configuration '{}': slot '{}' is bound twice, to '{}' and to '{}': bind each slot once",
                            excerpt(c.name), excerpt(p.slot), excerpt(it->second), excerpt(p.action));
      }
      to[p.slot] = p.action;
    }
  }
  std::map<std::string, std::string> slot_of;  // action -> the slot it was first bound to
  for (const auto& s : slots) {
    auto it = to.find(s.name);
    if (it == to.end()) continue;
    if (it->second.empty()) {
      throw Error::format(
          "configuration '{}': slot '{}' is bound to an empty action name: give the name of a bundle routine{}",
          excerpt(c.name), excerpt(s.name), s.optional ? ", or leave the slot out (it is optional)" : "");
    }
    if (auto first = slot_of.find(it->second); first != slot_of.end()) {
      throw Error::format(
          "configuration '{}': action '{}' is bound to slots '{}' and '{}', which are separate steps (each "
          "would apply it to every item it gets, and each has its own place and variables): bind '{}' to "
          "another routine, the same function added to the bundle under a second name if it is to run twice",
          excerpt(c.name), excerpt(it->second), excerpt(first->second), excerpt(s.name), excerpt(s.name));
    }
    slot_of[it->second] = s.name;
  }
  return to;
}

}  // namespace

std::vector<ActionSlot> Configuration::slots() const {
  std::vector<ActionSlot> out;
  for (const auto& t : teams) {
    if (t.action.empty()) continue;  // validate() names such a team
    auto it = std::find_if(out.begin(), out.end(), [&](const ActionSlot& s) { return s.name == t.action; });
    if (it == out.end()) it = out.insert(out.end(), ActionSlot{t.action, {}, true, ""});
    it->teams.push_back(t.name);
    it->optional = it->optional && droppable(*this, t);
  }
  return out;
}

Configuration Configuration::bind_actions(const ActionBinding& binding) const {
  const std::vector<ActionSlot> all = slots();
  const std::map<std::string, std::string> to = resolve(*this, all, binding);
  Configuration bound = *this;
  for (const auto& s : all) {
    if (to.count(s.name)) continue;
    if (!s.optional) {
      std::string teams;
      for (const auto& t : s.teams) teams += fmt::format("{}'{}'", teams.empty() ? "" : ", ", excerpt(t));
      throw Error::format(
          "configuration '{}': slot '{}' ({} {}) is left unbound, and the configuration cannot run "
          "without it: bind an action to '{}'{}",
          excerpt(name), excerpt(s.name), s.teams.size() == 1 ? "team" : "teams", teams, excerpt(s.name),
          binding.by_position() ? " (by position: one name for each slot up to it)" : "");
    }
    drop_slot(bound, s.name);
  }
  for (auto& t : bound.teams) t.action = to.at(t.action);
  return bound;
}

}  // namespace korch
