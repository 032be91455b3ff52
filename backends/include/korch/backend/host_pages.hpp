// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Physical pages of host memory that korch allocated and may hand back to the operating system
// while nothing on the host needs their contents (a resident grid's host copy, a device list's
// host copies: docs/residency.md "Host memory").
//
// The address range stays reserved, so pointers taken into it stay valid (guard-cell plans cache
// them); the next write or read of a released page gets a fresh zero-filled page from the system.
// Only whole pages inside [begin, begin + bytes) are released: cells of the same allocation that
// share a page with the range's ends are never touched.
#pragma once

#include <cstddef>

namespace korch {

// The system's page size in bytes.
std::size_t host_page_bytes() noexcept;
// Hands back the whole pages inside [begin, begin + bytes); their contents are lost. Returns the
// bytes handed back (0 where the system refused, e.g. for locked memory: the memory then stays).
std::size_t release_host_pages(void* begin, std::size_t bytes) noexcept;
// Bytes of the whole pages inside [begin, begin + bytes) that are in physical memory now.
std::size_t resident_host_bytes(const void* begin, std::size_t bytes) noexcept;

}  // namespace korch
