// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The named built-in configurations: one for each figure of the design's "A Menagerie of
// Configurations", for ConcurrentItor and SplitItor, and for the design's mapping example. Each is a JSON text (see
// korch/configuration.hpp) parsed by Configuration::from_json, so they double as examples of the JSON form. "gpu" means
// the backend's device space (a distinct HostSpace allocation on CPU-only builds); "fpga" teams of the figures are
// further device teams. Their actions are named A, B, C as in the figures: these names are the
// slots that get(name, actions) binds a bundle's action names to, by position or by slot:
//   configurations::get("cpu_gpu_action_parallel", {"advect", "diffuse"})   A = advect, B = diffuse
//   configurations::get("split_itor", {{"A", "advect"}})                     A = advect, B left out
// slots(name) lists them with a line each; docs/configurations.md draws every built-in. Every
// built-in fits a Runtime of 4 teams of 3 threads and 6 helper teams of 1 thread, which the default
// RuntimeOptions always give (docs/runtime-sizing.md).
//
// Variables: where pipelines run concurrently on the same blocks (action parallel), a packet may
// copy back only what its pipeline writes, or it would overwrite the other pipeline's results. The
// built-ins therefore follow one convention: action A writes variable 0, B writes 1, C writes 2
// (B may read 0 where it runs after A, C may read 1 where it runs after B), and their aggregators
// carry exactly those variables. Binding keeps this: the slot, not its action's name, says which
// variable its action writes, so an action bound to slot B writes variable 1. An application with
// other variables edits the helpers' `variables` of the returned Configuration (a plain struct)
// before executing it. An optional slot left unbound (split_itor's B, concurrent_itor's C) drops the
// team that would apply it; no helper carries a variable only that slot writes.
//
//   cpu_only                  distributor -> cpu(tile, A)
//   gpu_only                  distributor -> to_gpu(aggregator_mover) -> gpu(packet_of_blocks, A) ->
//   from_gpu(mover_unpacker) gpu_internal              distributor -> gpu(action_metadata, A) cpu_gpu_action_parallel
//   action parallel: cpu(tile, A) | to_gpu -> gpu(B) -> from_gpu cpu_gpu_data_parallel     data parallel:   cpu(tile,
//   A) | to_gpu -> gpu(A) -> from_gpu hybrid_distributor        hybrid: [cpu(A) | to_gpu -> gpu(A) -> from_gpu] +
//   to_fpga -> fpga(packet_of_tiles, B) -> from_fpga data_parallel_accumulator data parallel A on cpu | gpu, merged
//   into fpga(packet_of_blocks, B):
//                             cpu -> cpu_to_fpga(aggregator_mover) -> fpga; gpu -> gpu_to_fpga(mover d2d) -> fpga ->
//                             from_fpga
//   mashup                    data_parallel_accumulator + an action-parallel pipeline to_fpga2 ->
//   fpga2(packet_of_tiles, C)
//                             -> from_fpga2, with fpga2 a thread publisher of fpga (another pipeline)
//   concurrent_itor           action parallel: host(tile, A) | to_gpu -> gpu(B) -> from_gpu(mover_unpacker_splitter)
//                             -> post(tile, C, 0 threads); host and gpu are thread publishers of post
//   split_itor                data parallel A on cpu(tile) | to_gpu -> gpu(A) -> from_gpu(mover_unpacker_splitter),
//                             both work publishers of post(tile, B, 0 threads), which they also give threads
//   big_example               C_gpu . [B_gpu, B_cpu] . A_cpu (docs/planner.md, "Built-in pipelines with a data-parallel
//                             section"): a_cpu(tile, A) -> split_b(router, half the blocks each way)
//                             -> to_b_gpu -> b_gpu(B) | b_cpu(tile, B) -> to_c_gpu; both into
//                             c_gpu(packet_of_blocks, C) -> from_gpu
#pragma once

#include <korch/configuration.hpp>

#include <string>
#include <vector>

namespace korch::configurations {

std::vector<std::string> names();
// The JSON text of a built-in; throws korch::Error listing the names when `name` is unknown.
const std::string& json(const std::string& name);
Configuration get(const std::string& name);
// The built-in with the bundle's action names bound to its slots (Configuration::bind_actions):
// errors name the configuration, the slot and the fix.
Configuration get(const std::string& name, const ActionBinding& actions);
// The slots of a built-in in position order (A, B, C), each with a one-line description of where
// and when its action runs and which variables it reads and writes.
std::vector<ActionSlot> slots(const std::string& name);

}  // namespace korch::configurations
