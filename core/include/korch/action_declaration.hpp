// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What an action declares about itself (docs/planner.md, "Action declarations"): the variables it
// reads (each with the stencil width it reads: 0 pointwise, g when it needs g guard cells) and
// writes, the data type it works on, which blocks it is applied to, and hints for the scheduler.
// The runtime checks the declarations of a bundle's routines before a cycle runs (action-parallel
// pipelines must not share a written variable); the planner builds its kernel graph from them.
//
// JSON form (only "name" required):
// {"name": "B", "reads": ["dens", {"variable": "pres", "stencil": 1}], "writes": ["ener"],
//  "data_type": "tile", "iterator": "leaves",
//  "hints": {"short": false, "heavy": true, "host_only": false, "device_only": false,
//            "cost": {"host": 4.0, "device": 1.0}, "measured": {"host": 0.002, "device": 0.0005}}}
// data_type: tile, block or packet. iterator: "all_blocks", "leaves" or {"level": L}.
#pragma once

#include <string>
#include <vector>

namespace korch {

enum class DeclaredDataType { tile, block, packet };
enum class IteratorKind { all_blocks, leaves, level };

const char* to_string(DeclaredDataType type) noexcept;
const char* to_string(IteratorKind kind) noexcept;

struct ActionIterator {
  IteratorKind kind = IteratorKind::leaves;
  int level = 0;  // IteratorKind::level only
  bool operator==(const ActionIterator& o) const noexcept {
    return kind == o.kind && (kind != IteratorKind::level || level == o.level);
  }
  bool operator!=(const ActionIterator& o) const noexcept { return !(*this == o); }
  std::string describe() const;  // "leaves", "all_blocks", "level 2"
};

struct VariableRead {
  std::string variable;
  int stencil = 0;  // guard cells read on every side; 0: the cell itself only
};

// Costs are relative numbers in one unit per operation; 0 means not given. Measured costs (seconds
// per item) win over relative ones, relative ones over the short/heavy words.
struct ActionHints {
  bool short_running = false;  // JSON "short"
  bool heavy = false;
  bool host_only = false;
  bool device_only = false;
  double host_cost = 0.0;
  double device_cost = 0.0;
  double measured_host = 0.0;
  double measured_device = 0.0;
};

struct ActionDeclaration {
  std::string action;
  std::vector<VariableRead> reads;
  std::vector<std::string> writes;
  DeclaredDataType data_type = DeclaredDataType::tile;
  ActionIterator iterator;
  ActionHints hints;

  bool reads_variable(const std::string& variable) const noexcept;
  bool writes_variable(const std::string& variable) const noexcept;
  // The widest stencil this action reads `variable` with (-1 when it does not read it).
  int stencil_of(const std::string& variable) const noexcept;

  // Throws korch::Error naming the action and field for contradictions: an empty name, host_only
  // with device_only, short with heavy, a negative stencil or cost, a variable listed twice, or a
  // variable both written and read with a stencil (its neighbours' values would depend on the
  // order in which items are processed).
  void check() const;

  // Parses the JSON form above (errors: "action 'B': field reads[1].stencil: ...").
  static ActionDeclaration from_json(const std::string& text);
  std::string to_json() const;
};

}  // namespace korch
