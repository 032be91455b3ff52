// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checkpoint files of the hydro app and the stop signals that ask for one.
//
// A checkpoint holds what a run needs to continue exactly where it stopped: the options that shape
// the state and its evolution (problem, dimension, grid, gamma, cfl, conduction, limiter,
// boundary), the time and step count, and the current conserved state of every cell of the whole
// grid, x fastest, one variable after another (an adaptive mesh's leaves, below). The file is a short text header, one
// 'name value' line per field between a version line and an 'end' line, followed by the raw doubles (little-endian IEEE
// 754). The header's last field is a checksum (fnv1a64.hpp) over every byte before its line and every byte
// of the state, so a changed bit anywhere is seen. Rank 0 gathers the state and writes it atomically
// (output_files.hpp); at a restart every rank reads it and takes its own blocks, so a run may restart on another number
// of ranks. A restarted run is bitwise the uninterrupted one: the state is restored to the bit and the next time step
// is reduced from it as the cycle would have.
//
// The reader treats the file as untrusted (docs/input-formats.md, "Hydro checkpoints"): only a
// regular file is read, never waiting on a FIFO or a device; the header is at most
// checkpoint_header_limit bytes and every field is checked for its range and against the others;
// the file's size must be exactly the header's plus the state's, whose size is the run's grid; the
// checksum must match, the state must be finite and the run's options must continue the
// checkpoint's run.
#pragma once

#include <korch/error.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace korch::hydro {

struct Options;

struct CheckpointContent {
  std::string problem;
  int dim = 2, blocks = 0, cells_per_block = 0;
  double gamma = 0, cfl = 0, conduction = 0, time = 0;
  std::string limiter, boundary;
  int steps = 0;
  // An adaptive mesh (max_level > 0): the regrid's options, and the leaves in Morton order as
  // (level, x, y, z); each state variable then holds the leaves' interiors one after the other,
  // each x fastest.
  int max_level = 0;
  double refine_above = 0.8, derefine_below = 0.2;
  int regrid_every = 4;
  std::vector<std::array<std::int64_t, 4>> leaves;
  std::array<double, 5> initial_totals{};    // of step 0, for the summary's conservation line
  std::array<std::vector<double>, 5> state;  // each: the whole grid, x fastest
};

// What run() throws after a stop signal, once the final checkpoint is written.
struct Interrupted : Error {
  Interrupted(int signal_number, const std::string& message) : Error(message), signal(signal_number) {}
  int signal;
};

// The fields that `options` fix (problem, grid, physics, regrid options), the time, steps, state and
// leaves left for the run to fill in.
CheckpointContent checkpoint_fields(const Options& options);

// Writes `content` to `path` atomically. Throws korch::Error naming the file.
void write_checkpoint_file(const std::string& path, const CheckpointContent& content);
// Reads the checkpoint at `path` for a run with `options`, every check above included. Throws
// korch::Error naming the file and the field when it is not a checkpoint of this version, is
// damaged, cut short or inconsistent, and naming the option when `options` would not continue its
// run: another problem or grid, or --steps / --tmax already reached.
CheckpointContent read_checkpoint_file(const std::string& path, const Options& options);
// The same checks without keeping the state (a fixed buffer, whatever the grid): korch-hydro runs
// them before Kokkos starts, so that a checkpoint that cannot continue is a usage error.
void check_checkpoint_file(const std::string& path, const Options& options);
// Throws korch::Error naming the option when `options` would not continue the checkpoint's run.
void check_restart_options(const CheckpointContent& content, const Options& options, const std::string& path);

// SIGINT and SIGTERM set a flag instead of ending the process, so that the run can write a final
// checkpoint; stop_signal() is that signal (0: none yet).
void catch_stop_signals();
int stop_signal() noexcept;

}  // namespace korch::hydro
