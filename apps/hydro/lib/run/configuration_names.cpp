// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-hydro's configuration names (see configuration_names.hpp).
#include "configuration_names.hpp"

#include <korch/error.hpp>

#include <array>

namespace korch::hydro {

namespace {

struct Names {
  HydroConfiguration configuration;
  const char* builtin;
  const char* alias;
};

// In the order --help lists them.
constexpr std::array<Names, 4> names = {{
    {HydroConfiguration::cpu, "cpu_only", "cpu"},
    {HydroConfiguration::device, "gpu_only", "device"},
    {HydroConfiguration::split, "cpu_gpu_data_parallel", "split"},
    {HydroConfiguration::action_parallel, "cpu_gpu_action_parallel", "action-parallel"},
}};

const Names& names_of(HydroConfiguration configuration) noexcept {
  for (const Names& n : names)
    if (n.configuration == configuration) return n;
  return names[0];  // unreachable: every enumerator has its row
}

}  // namespace

const char* builtin_name(HydroConfiguration configuration) noexcept { return names_of(configuration).builtin; }

std::optional<HydroConfiguration> configuration_named(const std::string& name) {
  for (const Names& n : names)
    if (name == n.builtin || name == n.alias) return n.configuration;
  return std::nullopt;
}

std::string configuration_names() {
  std::string text;
  for (const Names& n : names) text += (text.empty() ? "" : ", ") + std::string(n.builtin) + " (or " + n.alias + ")";
  return text;
}

std::string unknown_configuration(const std::string& name) {
  return "unknown configuration '" + name + "': use " + configuration_names();
}

HydroConfiguration parse_configuration(const std::string& name) {
  if (const auto configuration = configuration_named(name)) return *configuration;
  throw Error("option --config: " + unknown_configuration(name));
}

}  // namespace korch::hydro
