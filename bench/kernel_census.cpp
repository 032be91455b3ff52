// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The kernel census: a Kokkos profiling library (loaded with KOKKOS_PROFILE_LIBRARY, no change to
// the program) that counts every parallel_for, parallel_reduce, parallel_scan and deep_copy by name
// and sums the host time from each one's start to its end. When the program ends it prints one
// table: how many launches each kernel had, their time, and how much of the run they cover.
//
// On a GPU a launch returns before its kernel runs, so run with CUDA_LAUNCH_BLOCKING=1 (HIP:
// AMD_SERIALIZE_KERNEL=3) to make each kernel's time its run time: the table then splits a run into
// kernels, copies and everything else (the orchestration between them), and its launch counts
// divided by the steps show what each step launches. On a host build the times are the kernels'
// own. A second table counts the allocations of Kokkos memory by space and label: on a GPU each
// one is a cudaMalloc or cudaHostAlloc (slow, and its free waits for the whole device), so a label
// whose count grows with the steps names an allocation inside the step. Used by scripts/gpu-check;
// docs/backends.md says how to read it.
//
//   KORCH_KERNEL_CENSUS_ROWS   rows of the table (default 25; the rest are summed in one line)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Tally {
  std::uint64_t launches = 0;
  double seconds = 0;
  std::uint64_t bytes = 0;  // copies: bytes moved
};

struct Allocations {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
};

// KORCH_KERNEL_CENSUS_ROWS, or 25; a value that is not a positive number is named, then ignored.
std::size_t rows_wanted() {
  const char* env = std::getenv("KORCH_KERNEL_CENSUS_ROWS");
  if (!env) return 25;
  char* end = nullptr;
  const long rows = std::strtol(env, &end, 10);
  if (end != env && *end == '\0' && rows > 0) return static_cast<std::size_t>(rows);
  std::fprintf(stderr, "kernel census: KORCH_KERNEL_CENSUS_ROWS is '%s': give a positive number of rows; showing 25\n",
               env);
  return 25;
}

// A copy row's bytes and their rate, e.g. "  [12.6 MB, 8.31 GB/s]"; empty for kernels.
std::string copy_volume(const Tally& t) {
  if (t.bytes == 0) return {};
  char text[64];
  std::snprintf(text, sizeof text, "  [%.1f MB, %.3g GB/s]", 1e-6 * static_cast<double>(t.bytes),
                t.seconds > 0 ? 1e-9 * static_cast<double>(t.bytes) / t.seconds : 0.0);
  return text;
}

struct Census {
  std::mutex mutex;
  Clock::time_point start = Clock::now();
  std::uint64_t next_id = 1;
  std::map<std::string, Tally> tallies;
  std::map<std::string, Allocations> allocations;  // by "space: label"

  // Open launches: several team threads launch at once, so each start is keyed by its id.
  struct Open {
    std::string name;
    Clock::time_point start;
    std::uint64_t bytes;
  };
  std::unordered_map<std::uint64_t, Open> open;

  void begin(const char* kind, const char* name, std::uint64_t* id, std::uint64_t bytes = 0) {
    const auto now = Clock::now();
    std::lock_guard<std::mutex> lock(mutex);
    *id = next_id++;
    open.emplace(*id, Open{std::string(kind) + (name ? name : "(unnamed)"), now, bytes});
  }
  void end(std::uint64_t id) {
    const auto now = Clock::now();
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = open.find(id);
    if (it == open.end()) return;
    Tally& t = tallies[it->second.name];
    ++t.launches;
    t.seconds += std::chrono::duration<double>(now - it->second.start).count();
    t.bytes += it->second.bytes;
    open.erase(it);
  }
  void allocated(const char* space, const char* label, std::uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    Allocations& a = allocations[std::string(space) + ": " + (label && *label ? label : "(unlabelled)")];
    ++a.count;
    a.bytes += bytes;
  }
  void print_allocations(std::size_t limit) {
    std::vector<std::pair<std::string, Allocations>> rows(allocations.begin(), allocations.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.count > b.second.count; });
    std::uint64_t count = 0, bytes = 0;
    for (const auto& row : rows) {
      count += row.second.count;
      bytes += row.second.bytes;
    }
    std::fprintf(stderr, "kernel census: %llu allocations of %.1f MB in all\n", static_cast<unsigned long long>(count),
                 1e-6 * static_cast<double>(bytes));
    std::fprintf(stderr, "kernel census: %10s %10s  %s\n", "allocs", "MB", "space: label");
    for (std::size_t r = 0; r < rows.size() && r < limit; ++r)
      std::fprintf(stderr, "kernel census: %10llu %10.1f  %s\n", static_cast<unsigned long long>(rows[r].second.count),
                   1e-6 * static_cast<double>(rows[r].second.bytes), rows[r].first.c_str());
    if (rows.size() > limit) std::fprintf(stderr, "kernel census: (%zu more labels)\n", rows.size() - limit);
  }
  void print() {
    std::lock_guard<std::mutex> lock(mutex);
    const double run = std::chrono::duration<double>(Clock::now() - start).count();
    std::vector<std::pair<std::string, Tally>> rows(tallies.begin(), tallies.end());
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    double kernels = 0, copies = 0;
    std::uint64_t launches = 0, copy_count = 0;
    for (const auto& [name, t] : rows) {
      const bool copy = name.rfind("copy ", 0) == 0;
      (copy ? copies : kernels) += t.seconds;
      (copy ? copy_count : launches) += t.launches;
    }
    std::fprintf(stderr,
                 "kernel census: %.3f s from Kokkos' start to its end: kernels %.3f s (%.1f %%) in %llu launches, "
                 "copies %.3f s (%.1f %%) in %llu\n",
                 run, kernels, 100 * kernels / run, static_cast<unsigned long long>(launches), copies,
                 100 * copies / run, static_cast<unsigned long long>(copy_count));
    const std::size_t limit = rows_wanted();
    std::fprintf(stderr, "kernel census: %10s %10s %10s %6s  %s\n", "launches", "total [s]", "mean [us]", "run %",
                 "kernel or copy");
    Tally rest;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const Tally& t = rows[r].second;
      if (r >= limit) {
        rest.launches += t.launches;
        rest.seconds += t.seconds;
        continue;
      }
      std::fprintf(stderr, "kernel census: %10llu %10.4f %10.1f %6.2f  %s%s\n",
                   static_cast<unsigned long long>(t.launches), t.seconds,
                   1e6 * t.seconds / static_cast<double>(t.launches), 100 * t.seconds / run, rows[r].first.c_str(),
                   copy_volume(t).c_str());
    }
    if (rest.launches > 0)
      std::fprintf(stderr, "kernel census: %10llu %10.4f %10s %6.2f  (%zu more names)\n",
                   static_cast<unsigned long long>(rest.launches), rest.seconds, "", 100 * rest.seconds / run,
                   rows.size() - limit);
    print_allocations(limit);
  }
};

Census& census() {
  static Census c;
  return c;
}

// Kokkos' handle of a memory space in the deep-copy callbacks.
struct SpaceHandle {
  char name[64];
};

// A copy's row: its spaces, and the Views' labels where they have one (unmanaged Views have none),
// so that the packets' copies show apart from the guard fill's and the outputs'.
std::string copy_name(const char* src_space, const char* src_label, const char* dst_space, const char* dst_label) {
  const auto side = [](const char* space, const char* label) {
    return label && *label ? std::string(space) + " '" + label + "'" : std::string(space);
  };
  return side(src_space, src_label) + " -> " + side(dst_space, dst_label);
}

// Kokkos calls the deep-copy pair from the copying thread without an id: one open copy per thread.
thread_local std::uint64_t open_copy = 0;

}  // namespace

// The Kokkos profiling interface: plain C functions that Kokkos looks up by name.
extern "C" {
void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) { (void)census(); }
void kokkosp_finalize_library() { census().print(); }
void kokkosp_begin_parallel_for(const char* name, std::uint32_t, std::uint64_t* id) {
  census().begin("for ", name, id);
}
void kokkosp_end_parallel_for(std::uint64_t id) { census().end(id); }
void kokkosp_begin_parallel_reduce(const char* name, std::uint32_t, std::uint64_t* id) {
  census().begin("reduce ", name, id);
}
void kokkosp_end_parallel_reduce(std::uint64_t id) { census().end(id); }
void kokkosp_begin_parallel_scan(const char* name, std::uint32_t, std::uint64_t* id) {
  census().begin("scan ", name, id);
}
void kokkosp_end_parallel_scan(std::uint64_t id) { census().end(id); }
void kokkosp_begin_deep_copy(SpaceHandle dst, const char* dst_label, const void*, SpaceHandle src,
                             const char* src_label, const void*, std::uint64_t bytes) {
  census().begin("copy ", copy_name(src.name, src_label, dst.name, dst_label).c_str(), &open_copy, bytes);
}
void kokkosp_end_deep_copy() { census().end(open_copy); }
void kokkosp_allocate_data(SpaceHandle space, const char* label, const void*, std::uint64_t bytes) {
  census().allocated(space.name, label, bytes);
}
}
