// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Input files read whole (operation and plan files, checkpoints): a reader must stop at once on
// what is not a file of bounded size. A plain stream read of /dev/zero never ends and one of a
// FIFO blocks until a writer comes; a folder reads as no bytes. The file is opened with O_NONBLOCK
// (so opening a FIFO does not wait) and checked with fstat before any byte is read.
#pragma once

#include <cstddef>
#include <string>

namespace korch {

// The whole content of `path`, which must be a regular file of at most `max_bytes` bytes. Throws
// korch::Error starting with "cannot read `what` '`path`': " and saying why (the system's error
// text, "it is a folder", "it is not a regular file (a device, FIFO or socket)", or its size
// against the limit) and what to give instead.
std::string read_regular_file(const std::string& path, std::size_t max_bytes, const std::string& what);

}  // namespace korch
