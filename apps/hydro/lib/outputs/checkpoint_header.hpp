// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The text header of a checkpoint file (checkpoint.hpp): writing it, and reading it back with
// every field checked on its own and against the others.
//
//   korch-hydro checkpoint 3
//   problem sedov
//   ...                          one 'name value' line per field, each field once, in any order
//   cells 1024
//   checksum fnv1a64 0123456789abcdef   always last: it covers the bytes before its line
//   end
#pragma once

#include "checkpoint.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace korch::hydro {

// A double as text that reads back to the same bits (hexadecimal floating point).
std::string exact_text(double x);

// The version this korch writes and reads; a file of another version is refused naming both.
inline constexpr int checkpoint_version = 3;
// A reader looks no further than this for the header's 'end' line (a header takes about 500).
inline constexpr std::size_t checkpoint_header_limit = 4096;

struct CheckpointHeader {
  CheckpointContent fields;     // every field but the state, which stays empty
  std::int64_t leaves = 0;      // blocks whose cells the state holds (an adaptive mesh's leaves)
  std::int64_t cells = 0;       // of the whole grid, the same for each of the five variables
  std::uint64_t checksum = 0;   // as the file gives it
  std::size_t checksummed = 0;  // bytes before the checksum line: the checksum covers these, then the state
  std::size_t length = 0;       // bytes up to and including the 'end' line, where the state starts
};

// The header of `content` up to its checksum line (the state's sizes give the 'cells' field), and
// the lines that end it once the checksum is known.
std::string checkpoint_header_fields(const CheckpointContent& content);
std::string checkpoint_header_end(std::uint64_t checksum);

// Reads the header at the start of `bytes` (a file's first bytes, at most checkpoint_header_limit
// of them). Throws korch::Error naming `path` and the field, or the version, when the header is
// not one of this version, is cut short, has an unknown, missing or repeated field, a value out of
// its range, or fields that contradict each other.
CheckpointHeader parse_checkpoint_header(const std::string& bytes, const std::string& path);

}  // namespace korch::hydro
