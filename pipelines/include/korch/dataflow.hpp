// korch dataflow pipelines: graph builder, MERCATOR firing protocol, regions,
// enumeration, one pipeline instance per Kokkos team. See korch/dataflow/pipeline.hpp.
#pragma once

#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/graph.hpp>
#include <korch/dataflow/node.hpp>
#include <korch/dataflow/pipeline.hpp>
#include <korch/dataflow/queue.hpp>
#include <korch/dataflow/signal.hpp>
