// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The whole public API of korch in one include: the runtime (thread teams, bundles, actions,
// configurations and the built-in ones), the data a code hands it (its own blocks or korch's Grid),
// guard cells and ranks, traces and their pictures, the planner, dataflow pipelines, stream programs
// and mesh loops. With MPI, korch::communicator_of(MPI_Comm) too. Finer headers exist for codes that
// want shorter builds; every example in the documentation uses this one.
#pragma once

#include <korch/backend/backend_info.hpp>
#include <korch/config.hpp>
#include <korch/error.hpp>

// The runtime and what runs on it.
#include <korch/action_context.hpp>
#include <korch/action_declaration.hpp>
#include <korch/action_routine.hpp>
#include <korch/bundle.hpp>
#include <korch/configuration.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/configurations/drawing.hpp>
#include <korch/runtime.hpp>
#include <korch/runtime_sizing.hpp>
#include <korch/thread_team.hpp>
#include <korch/typed_action.hpp>

// The data: a code's own blocks, korch's Grid, and the items the runtime hands to actions.
#include <korch/block.hpp>
#include <korch/block_forest.hpp>
#include <korch/block_iterator.hpp>
#include <korch/block_iterators.hpp>
#include <korch/block_list.hpp>
#include <korch/box_view.hpp>
#include <korch/data_packet.hpp>
#include <korch/data_source.hpp>
#include <korch/grid.hpp>
#include <korch/tile.hpp>

// Guard cells and ranks.
#include <korch/block_neighbours.hpp>
#include <korch/communicator.hpp>
#include <korch/guard_cell_boundary.hpp>
#include <korch/guard_cell_exchange.hpp>
#include <korch/guard_cell_iterator.hpp>
#if KORCH_HAVE_MPI
#include <korch/mpi_communicator.hpp>
#endif

// Traces, timelines and pictures.
#include <korch/merged_trace.hpp>
#include <korch/recent_cycles.hpp>
#include <korch/record_replay.hpp>
#include <korch/timeline.hpp>
#include <korch/trace.hpp>

// The planner, dataflow pipelines, stream programs and mesh loops.
#include <korch/dataflow.hpp>
#include <korch/mesh.hpp>
#include <korch/plan/action_registry.hpp>
#include <korch/plan/adaptive_executor.hpp>
#include <korch/plan/executor.hpp>
#include <korch/plan/operation.hpp>
#include <korch/plan/plan.hpp>
#include <korch/plan/plan_check.hpp>
#include <korch/streams.hpp>
