// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Output files that a killed program cannot spoil (korch's pictures and traces, korch-hydro's outputs).
//
// Every output is written to a temporary file in the same directory and then renamed over its
// final name: rename() within one file system replaces the name atomically on POSIX, so a reader
// (or a run killed at any moment) sees either the old complete file or the new complete one, never
// a truncated or empty file. Temporaries are hidden files ".<name>.korch-tmp-<pid>"; a run killed
// before its rename leaves one behind, and prepare_output_directory removes those of processes
// that no longer exist.
#pragma once

#include <functional>
#include <string>

namespace korch {

// Creates `dir` (and its parents) if needed and checks that a file can be created, written and
// removed in it; removes stale temporaries of dead processes. Throws korch::Error naming the
// directory and the reason (the system's error text) otherwise. Call it before the first step, so
// that a long run does not fail only at its end.
void prepare_output_directory(const std::string& dir);

// The temporary name write_file_atomically uses for `path` in this process.
std::string temporary_path(const std::string& path);

// Whether `filename` (no directory) is the name of a temporary of some process.
bool is_temporary_name(const std::string& filename);

// Calls write(temporary) to produce the file under a temporary name next to `path`, flushes it to
// disk and renames it to `path`. When write throws or the rename fails, the temporary is removed
// and `path` is left as it was; write's korch::Error passes through, other failures become a
// korch::Error naming `path` and the reason.
void write_file_atomically(const std::string& path, const std::function<void(const std::string& temporary)>& write);

// write_file_atomically of `text` as the file's bytes; a file that cannot be opened or written
// (no such folder, no permission, a full disk) is a korch::Error naming `path` and what to check.
void write_text_file_atomically(const std::string& path, const std::string& text);

}  // namespace korch
