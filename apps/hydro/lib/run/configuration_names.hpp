// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The configurations korch-hydro runs its hand-bundled step on (--config). Each is one of the
// library's built-ins (korch-configurations lists them) edited for the hydro variables
// (runtime_configuration.hpp). This file is the one place that maps names to them: the built-in's
// name, and a short alias accepted on the command line only; everything else switches on
// HydroConfiguration. Nothing here uses Kokkos: the command line's fuzz target links it.
#pragma once

#include <optional>
#include <string>

namespace korch::hydro {

enum class HydroConfiguration {
  cpu,             // cpu_only: tiles on the host team
  device,          // gpu_only: packets of blocks to the backend's device space
  split,           // cpu_gpu_data_parallel: host tiles | device packets, blocks split by throughput
  action_parallel  // cpu_gpu_action_parallel: hydro on host tiles | "diagnostics" on device packets
};

// The library's name of the built-in ("cpu_only"): what the summary, the pictures and the ranks'
// check show, so that one configuration has one name in everything korch-hydro prints.
const char* builtin_name(HydroConfiguration configuration) noexcept;
// The configuration `name` (either name) stands for; nullopt for any other text.
std::optional<HydroConfiguration> configuration_named(const std::string& name);
// Every accepted name, the built-in's first: "cpu_only (or cpu), gpu_only (or device), ...".
std::string configuration_names();
// Why `name` is refused: "unknown configuration 'gpu': use cpu_only (or cpu), ...".
std::string unknown_configuration(const std::string& name);
// The configuration named `name`; throws korch::Error naming --config, the value and the names.
HydroConfiguration parse_configuration(const std::string& name);

}  // namespace korch::hydro
