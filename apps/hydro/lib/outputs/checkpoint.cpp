// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "checkpoint.hpp"

#include "checkpoint_header.hpp"
#include "fnv1a64.hpp"
#include "options.hpp"

#include <korch/error.hpp>
#include <korch/output_files.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace korch::hydro {

namespace {

std::atomic<int> caught_signal{0};

extern "C" void on_stop_signal(int signal) { caught_signal.store(signal); }

bool little_endian() {
  const std::uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

constexpr std::array<const char*, 5> kVariables = {"density", "momentum x", "momentum y", "momentum z", "energy"};

const char* kind_of_file(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// A checkpoint opened for reading, regular files only: open() does not wait for a FIFO's writer
// (O_NONBLOCK), and fstat() refuses what is not a regular file before a byte is read, so a FIFO or
// a device such as /dev/zero is refused at once. A regular file's size is known before reading.
class CheckpointInput {
 public:
  explicit CheckpointInput(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0)
      throw Error::format(
          "option --restart: cannot open '{}' ({}): give a checkpoint file written by --checkpoint-every", path,
          std::strerror(errno));
    struct stat st {};
    const bool known = ::fstat(fd_, &st) == 0;
    if (!known || !S_ISREG(st.st_mode)) {
      const std::string kind =
          known ? kind_of_file(st.st_mode) : fmt::format("of an unknown kind ({})", std::strerror(errno));
      ::close(fd_);
      throw Error::format(
          "option --restart: '{}' is {}, not a checkpoint file: give a file written by --checkpoint-every", path, kind);
    }
    size_ = static_cast<std::int64_t>(st.st_size);
  }
  ~CheckpointInput() { ::close(fd_); }
  CheckpointInput(const CheckpointInput&) = delete;
  CheckpointInput& operator=(const CheckpointInput&) = delete;

  std::int64_t size() const noexcept { return size_; }

  // Reads `n` bytes at `offset`; throws naming the file when fewer are there (cut short meanwhile).
  void read(std::int64_t offset, void* into, std::size_t n) const {
    auto* p = static_cast<char*>(into);
    while (n > 0) {
      const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0)
        throw Error::format("checkpoint '{}': reading at byte {} failed ({}): the file was cut short or cannot be read",
                            path_, offset, got == 0 ? "end of file" : std::strerror(errno));
      p += got;
      n -= static_cast<std::size_t>(got);
      offset += got;
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::int64_t size_ = 0;
};

// The first non-finite value of the state, if any: (variable, cell).
struct NonFinite {
  int variable = -1;
  std::size_t cell = 0;
  double value = 0;
};

// The leaves' keys within the mesh: levels 0..max_level, positions inside the domain at their level.
void check_leaves(const CheckpointContent& c, const std::string& path) {
  for (std::size_t n = 0; n < c.leaves.size(); ++n) {
    const auto& key = c.leaves[n];
    bool inside = key[0] >= 0 && key[0] <= c.max_level;
    for (int a = 0; a < 3 && inside; ++a) {
      const std::int64_t extent = a < c.dim ? std::int64_t{c.blocks} << key[0] : 1;
      inside = key[static_cast<std::size_t>(a) + 1] >= 0 && key[static_cast<std::size_t>(a) + 1] < extent;
    }
    if (!inside)
      throw Error::format(
          "checkpoint '{}': leaf {} is (level {}, {}, {}, {}), outside an adaptive mesh of {}^{} roots and {} levels "
          "above them: the file is damaged",
          path, n, key[0], key[1], key[2], key[3], c.blocks, c.dim, c.max_level);
  }
}

// Reads the state after the header, into h.fields.state when `keep` (else through a buffer),
// and checks the checksum over the header's checksummed bytes and the state, then that every
// value is finite.
void read_state(const CheckpointInput& in, const std::string& head, CheckpointHeader& h, bool keep,
                const std::string& path) {
  const auto cells = static_cast<std::size_t>(h.cells);
  const std::size_t chunk = std::min<std::size_t>(cells, std::size_t{1} << 16);  // doubles per read
  std::vector<double> buffer(keep ? 0 : chunk);
  Fnv1a64 sum;
  sum.add(head.data(), h.checksummed);
  std::int64_t offset = static_cast<std::int64_t>(h.length);
  if (h.fields.max_level > 0) {
    auto& leaves = h.fields.leaves;
    leaves.resize(static_cast<std::size_t>(h.leaves));
    const std::size_t bytes = leaves.size() * sizeof(leaves[0]);
    in.read(offset, leaves.data(), bytes);
    sum.add(leaves.data(), bytes);
    offset += static_cast<std::int64_t>(bytes);
  }
  NonFinite bad;
  for (int v = 0; v < n_cons; ++v) {
    std::vector<double>& state = h.fields.state[static_cast<std::size_t>(v)];
    if (keep) state.resize(cells);
    for (std::size_t done = 0; done < cells; done += chunk) {
      const std::size_t n = std::min(chunk, cells - done);
      double* into = keep ? state.data() + done : buffer.data();
      in.read(offset, into, n * sizeof(double));
      offset += static_cast<std::int64_t>(n * sizeof(double));
      sum.add(into, n * sizeof(double));
      for (std::size_t i = 0; i < n && bad.variable < 0; ++i)
        if (!std::isfinite(into[i])) bad = {v, done + i, into[i]};
    }
  }
  if (sum.value() != h.checksum)
    throw Error::format(
        "checkpoint '{}': field 'checksum' is {:016x}, but the file's bytes give {:016x}: the file was "
        "changed after korch wrote it (a damaged copy or disk, or an edit); use an intact checkpoint",
        path, h.checksum, sum.value());
  check_leaves(h.fields, path);
  if (bad.variable >= 0) {
    // A uniform grid's cells count x fastest over the whole grid, an adaptive mesh's over each leaf.
    const bool adaptive = h.fields.max_level > 0;
    const auto m = static_cast<std::size_t>(h.fields.cells_per_block);
    const std::size_t n = adaptive ? m : static_cast<std::size_t>(h.fields.blocks) * m;
    const std::size_t per_leaf = h.fields.dim == 3 ? m * m * m : m * m;
    const std::size_t cell = adaptive ? bad.cell % per_leaf : bad.cell;
    throw Error::format(
        "checkpoint '{}': the state's {} at cell ({}, {}, {}){} is {}: the run that wrote it had failed; "
        "restart from an earlier checkpoint",
        path, kVariables[static_cast<std::size_t>(bad.variable)], cell % n, cell / n % n, cell / n / n,
        adaptive ? fmt::format(" of leaf {}", bad.cell / per_leaf) : std::string(), bad.value);
  }
}

// The checkpoint's run is over already when run() would take no step: the same rule as its loop.
void check_not_finished(const CheckpointContent& c, const Options& o, const std::string& path) {
  if (o.steps > 0) {
    if (c.steps >= o.steps)
      throw Error::format(
          "option --steps: {}, but checkpoint '{}' is at step {} (t = {}) already: give --steps above {} "
          "to continue it",
          o.steps, path, c.steps, c.time, c.steps);
    return;
  }
  const double tmax = o.tmax > 0 ? o.tmax : default_tmax(o.problem);
  if (c.time >= tmax * (1.0 - 1e-12))
    throw Error::format(
        "option --tmax: {}{}, but checkpoint '{}' is at t = {} (step {}) already: give a --tmax above {} "
        "to continue it",
        tmax, o.tmax > 0 ? "" : fmt::format(" (the default of --problem {})", c.problem), path, c.time, c.steps,
        c.time);
}

// The grid's size against the run's before the state is read: what is allocated is the run's own grid.
void check_grid(const CheckpointContent& c, const Options& o, const std::string& path) {
  auto differs = [&](const char* option, int file, int given) {
    if (file != given)
      throw Error::format("option {}: '{}' was written with {} {}, this run has {}: give the checkpoint's value",
                          option, path, option, file, given);
  };
  differs("--dim", c.dim, o.dim);
  differs("--blocks", c.blocks, o.blocks);
  differs("--cells-per-block", c.cells_per_block, o.cells_per_block);
  differs("--max-level", c.max_level, o.max_level);
}

CheckpointContent load(const std::string& path, const Options& o, bool keep_state) {
  if (!little_endian())
    throw Error("checkpoint: this machine is not little-endian; checkpoints store little-endian doubles");
  const CheckpointInput in(path);
  std::string head(static_cast<std::size_t>(std::min<std::int64_t>(in.size(), checkpoint_header_limit)), '\0');
  in.read(0, head.data(), head.size());
  CheckpointHeader h = parse_checkpoint_header(head, path);
  const std::int64_t key_bytes =
      h.fields.max_level > 0 ? h.leaves * static_cast<std::int64_t>(sizeof(std::array<std::int64_t, 4>)) : 0;
  const std::int64_t state_bytes = key_bytes + n_cons * h.cells * static_cast<std::int64_t>(sizeof(double));
  const std::int64_t after_header = in.size() - static_cast<std::int64_t>(h.length);
  if (after_header != state_bytes)
    throw Error::format(
        "checkpoint '{}': {} bytes after the header, but the state of {} cells{} takes {}: the file is {}", path,
        after_header, h.cells, key_bytes > 0 ? fmt::format(" and {} leaves", h.leaves) : "", state_bytes,
        after_header < state_bytes ? "cut short" : "longer than a checkpoint");
  check_grid(h.fields, o, path);
  read_state(in, head, h, keep_state, path);
  check_restart_options(h.fields, o, path);
  check_not_finished(h.fields, o, path);
  return std::move(h.fields);
}

}  // namespace

void catch_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

int stop_signal() noexcept { return caught_signal.load(); }

CheckpointContent checkpoint_fields(const Options& o) {
  CheckpointContent c;
  c.problem = to_string(o.problem);
  c.dim = o.dim;
  c.blocks = o.blocks;
  c.cells_per_block = o.cells_per_block;
  c.gamma = o.gamma;
  c.cfl = o.cfl;
  c.conduction = o.conduction;
  c.limiter = o.limiter == Limiter::minmod ? "minmod" : "mc";
  const Boundary b = o.boundary ? *o.boundary : (o.problem == Problem::wave ? Boundary::periodic : Boundary::outflow);
  c.boundary = b == Boundary::periodic ? "periodic" : "outflow";
  c.max_level = o.max_level;
  c.refine_above = o.refine_above;
  c.derefine_below = o.derefine_below;
  c.regrid_every = o.regrid_every;
  return c;
}

void write_checkpoint_file(const std::string& path, const CheckpointContent& c) {
  if (!little_endian())
    throw Error("checkpoint: this machine is not little-endian; checkpoints store little-endian doubles");
  for (const auto& v : c.state)
    if (v.size() != c.state[0].size() || v.empty())
      throw Error::format("checkpoint '{}': the five state variables have {} and {} cells: give each the whole grid",
                          path, c.state[0].size(), v.size());
  const std::string fields = checkpoint_header_fields(c);
  Fnv1a64 sum;
  sum.add(fields.data(), fields.size());
  const std::size_t key_bytes = c.max_level > 0 ? c.leaves.size() * sizeof(c.leaves[0]) : 0;
  sum.add(c.leaves.data(), key_bytes);
  for (const auto& v : c.state) sum.add(v.data(), v.size() * sizeof(double));
  write_file_atomically(path, [&](const std::string& temporary) {
    std::ofstream out(temporary, std::ios::binary);
    if (!out) throw Error::format("checkpoint: cannot open '{}' for writing", temporary);
    out << fields << checkpoint_header_end(sum.value());
    out.write(reinterpret_cast<const char*>(c.leaves.data()), static_cast<std::streamsize>(key_bytes));
    for (const auto& v : c.state)
      out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
    if (!out) throw Error::format("checkpoint: writing '{}' failed: check the free space", temporary);
  });
}

CheckpointContent read_checkpoint_file(const std::string& path, const Options& options) {
  return load(path, options, true);
}

void check_checkpoint_file(const std::string& path, const Options& options) { load(path, options, false); }

void check_restart_options(const CheckpointContent& c, const Options& o, const std::string& path) {
  auto mismatch = [&](const char* option, const std::string& file, const std::string& given) {
    if (file != given)
      throw Error::format("option {}: '{}' was written with {} {}, this run has {}: give the checkpoint's value",
                          option, path, option, file, given);
  };
  check_grid(c, o, path);
  mismatch("--problem", c.problem, to_string(o.problem));
  mismatch("--limiter", c.limiter, o.limiter == Limiter::minmod ? "minmod" : "mc");
  const Boundary b = o.boundary ? *o.boundary : (o.problem == Problem::wave ? Boundary::periodic : Boundary::outflow);
  mismatch("--boundary", c.boundary, b == Boundary::periodic ? "periodic" : "outflow");
  // Exact comparisons: the continued run is bitwise the uninterrupted one only with the same values.
  if (c.gamma != o.gamma) mismatch("gamma", exact_text(c.gamma), exact_text(o.gamma));
  if (c.cfl != o.cfl) mismatch("--cfl", fmt::format("{}", c.cfl), fmt::format("{}", o.cfl));
  if (c.conduction != o.conduction)
    mismatch("--conduction", fmt::format("{}", c.conduction), fmt::format("{}", o.conduction));
  if (c.max_level == 0) return;
  if (c.refine_above != o.refine_above)
    mismatch("--refine-above", fmt::format("{}", c.refine_above), fmt::format("{}", o.refine_above));
  if (c.derefine_below != o.derefine_below)
    mismatch("--derefine-below", fmt::format("{}", c.derefine_below), fmt::format("{}", o.derefine_below));
  if (c.regrid_every != o.regrid_every)
    mismatch("--regrid-every", std::to_string(c.regrid_every), std::to_string(o.regrid_every));
}

}  // namespace korch::hydro
