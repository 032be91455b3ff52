// Checkpoint files of the hydro app and the stop signals that ask for one.
//
// A checkpoint holds what a run needs to continue exactly where it stopped: the problem's
// parameters that shape the state (problem, dimension, grid, gamma, limiter, boundary), the time
// and step count, and the current conserved state of every cell of the whole grid, x fastest, one
// variable after another. The file is a short text header followed by the raw doubles
// (little-endian IEEE 754): rank 0 gathers the state and writes it atomically (output_files.hpp);
// at a restart every rank reads it and takes its own blocks, so a run may restart on another number
// of ranks. A restarted run is bitwise the uninterrupted one: the state is restored to the bit and
// the next time step is reduced from it as the cycle would have.
#pragma once

#include <korch/error.hpp>

#include <array>
#include <string>
#include <vector>

namespace korch::hydro {

struct Options;

struct CheckpointContent {
  std::string problem;
  int dim = 2, blocks = 0, cells_per_block = 0;
  double gamma = 0, time = 0;
  std::string limiter, boundary;
  int steps = 0;
  std::array<double, 5> initial_totals{};    // of step 0, for the summary's conservation line
  std::array<std::vector<double>, 5> state;  // each: the whole grid, x fastest
};

// What run() throws after a stop signal, once the final checkpoint is written.
struct Interrupted : Error {
  Interrupted(int signal_number, const std::string& message) : Error(message), signal(signal_number) {}
  int signal;
};

// Writes `content` to `path` atomically. Throws korch::Error naming the file.
void write_checkpoint_file(const std::string& path, const CheckpointContent& content);
// Reads a checkpoint; throws korch::Error naming the file and the field when it is not one, is cut
// short, or its sizes do not add up.
CheckpointContent read_checkpoint_file(const std::string& path);
// Throws korch::Error naming the option when `options` would not continue the checkpoint's run.
void check_restart_options(const CheckpointContent& content, const Options& options, const std::string& path);

// SIGINT and SIGTERM set a flag instead of ending the process, so that the run can write a final
// checkpoint; stop_signal() is that signal (0: none yet).
void catch_stop_signals();
int stop_signal() noexcept;

}  // namespace korch::hydro
