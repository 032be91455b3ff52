// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The bridge between korch's items and a C or Fortran action routine (korch/korch_c.h).
#pragma once

#include <korch/action_context.hpp>
#include <korch/action_routine.hpp>
#include <korch/box_view.hpp>
#include <korch/bundle.hpp>
#include <korch/configuration.hpp>
#include <korch/data_packet.hpp>
#include <korch/korch_c.h>

#include <functional>
#include <string>

namespace korch::c_api {

// An action routine that calls `function` with each tile or block it gets, and with each entry of a
// data packet (run_on_packet); a non-zero status becomes a korch::Error naming the action, the
// status, the item and the routine's message.
ActionRoutine routine(const std::string& name, korch_action_fn function, void* user);
// Keeps the calling thread's routine message (korch_routine_message).
void set_routine_message(const char* message);
// The action whose C or Fortran routine the calling thread is running, or null outside routines.
const std::string* routine_running() noexcept;
// Throws when called from a C or Fortran action routine: calls that take the library's lock do this
// first, since the thread running a cycle holds the runtime's cycle lock (`fix` says what to do).
void refuse_inside_routine(const char* fix);

// The C API's description of a tile, block or packet entry `box` (block-local) of `block`, whose
// cells the routine gets laid out as `view`, and its faces as `faces` (per axis; null: the source's
// own face arrays).
korch_item describe(const DataSource& source, int block, int tile, const Box& box, const BlockView& view,
                    const BlockView* faces = nullptr);
// Runs `call`, a C or Fortran routine of `name` (refuse_inside_routine applies inside it); returns
// its status, and in `message` what it gave korch_routine_message (excerpted).
int call_user_routine(const std::string& name, const std::function<int()>& call, std::string& message);
// Runs `function` on one item; a non-zero status becomes a korch::Error naming the action, the
// status, `what` (the item) and the routine's message.
void call_routine(const std::string& name, korch_action_fn function, void* user, const korch_item& item, double* data,
                  const std::string& what);
// Runs `function` once per entry of `packet`, on a copy of the entry in its block's own layout
// (c_packet.cpp); throws where the packet lies in memory the host cannot read.
void run_on_packet(const std::string& name, korch_action_fn function, void* user, const ActionContext& ctx,
                   DataPacket& packet);
// Refuses, before a cycle, a configuration that would give a C or Fortran routine of `bundle` items
// it cannot run on (action metadata, packets in device memory), naming the configuration, the team
// and what to use instead.
void check_c_routines(const Configuration& configuration, const Bundle& bundle);

}  // namespace korch::c_api
