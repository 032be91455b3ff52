// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch dataflow pipelines: graph builder, MERCATOR firing protocol, regions,
// enumeration, one pipeline instance per Kokkos team. Design: docs/dataflow.md.
#pragma once

#include <korch/dataflow/aggregate_node.hpp>
#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/emitter.hpp>
#include <korch/dataflow/enumerate_node.hpp>
#include <korch/dataflow/error_bits.hpp>
#include <korch/dataflow/graph.hpp>
#include <korch/dataflow/instance_state.hpp>
#include <korch/dataflow/map_node.hpp>
#include <korch/dataflow/node.hpp>
#include <korch/dataflow/pipeline.hpp>
#include <korch/dataflow/pipeline_kernel.hpp>
#include <korch/dataflow/protocol.hpp>
#include <korch/dataflow/queue.hpp>
#include <korch/dataflow/signal.hpp>
#include <korch/dataflow/sink_node.hpp>
#include <korch/dataflow/source_node.hpp>
#include <korch/dataflow/stats.hpp>
