// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stream programs with Ziria-style composition: the DSL, the sequential interpreter, the
// queues, execution maps and plans, and the parallel executor. Design: docs/streams.md.
#pragma once

#include <korch/streams/cardinality.hpp>
#include <korch/streams/commit_queue.hpp>
#include <korch/streams/item.hpp>
#include <korch/streams/parallel.hpp>
#include <korch/streams/plan.hpp>
#include <korch/streams/program.hpp>
#include <korch/streams/sequential.hpp>
#include <korch/streams/spsc_ring.hpp>
#include <korch/streams/typed.hpp>
