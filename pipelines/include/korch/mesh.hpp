// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Mesh loops (OP2 style): sets, dats, maps, globals, par_loops and their executors. Design:
// docs/mesh.md.
#pragma once

#include <korch/mesh/access.hpp>
#include <korch/mesh/arg.hpp>
#include <korch/mesh/dat.hpp>
#include <korch/mesh/direct_executor.hpp>
#include <korch/mesh/executor.hpp>
#include <korch/mesh/global.hpp>
#include <korch/mesh/map.hpp>
#include <korch/mesh/message_executor.hpp>
#include <korch/mesh/par_loop.hpp>
#include <korch/mesh/partition.hpp>
#include <korch/mesh/rank_executor.hpp>
#include <korch/mesh/set.hpp>
