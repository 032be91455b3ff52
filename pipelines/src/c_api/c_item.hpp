// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The bridge between korch's items and a C or Fortran action routine (korch/korch_c.h).
#pragma once

#include <korch/action_routine.hpp>
#include <korch/korch_c.h>

#include <string>

namespace korch::c_api {

// An action routine that calls `function` with each tile or block it gets; a non-zero status
// becomes a korch::Error naming the action, the status, the item and the routine's message.
ActionRoutine routine(const std::string& name, korch_action_fn function, void* user);
// Keeps the calling thread's routine message (korch_routine_message).
void set_routine_message(const char* message);
// The action whose C or Fortran routine the calling thread is running, or null outside routines.
const std::string* routine_running() noexcept;
// Throws when called from a C or Fortran action routine: calls that take the library's lock do this
// first, since the thread running a cycle holds the runtime's cycle lock (`fix` says what to do).
void refuse_inside_routine(const char* fix);

}  // namespace korch::c_api
