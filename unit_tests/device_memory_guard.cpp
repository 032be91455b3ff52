// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The device memory guard: a Kokkos profiling library (loaded with KOKKOS_PROFILE_LIBRARY) that lets
// a host build catch what a GPU build would die of, the host reading or writing device memory
// outside a kernel or a copy (docs/testing.md, "Device memory on a host build"). On a host build
// korch's device memory is host memory, so such an access works there and crashes only on CUDA or
// HIP; the guard makes it crash here, at the access.
//
// Every allocation whose label matches KORCH_DEVICE_GUARD_LABELS (an ECMAScript regular
// expression) is taken as device memory: the whole pages inside its data are made inaccessible
// (mprotect) whenever no Kokkos kernel or deep copy runs, and opened while one does (a new
// allocation from the end of the next one, as Kokkos may initialize it outside any). An access at
// another time faults; the guard names the allocation and the offset on stderr, then lets the
// fault take its course (the suites' crash report prints the call stack).
//
// Only whole pages are guarded, so that nothing else that shares a page with an allocation (the
// allocator's own records, Kokkos' header with the label in front of the data, other allocations)
// ever faults: the first and last bytes of an allocation, and allocations under two pages, go
// unguarded. Kernels that run while the host code of another thread runs open the pages for both:
// meant for suites whose device work runs on the thread that launched it (the guard-cell exchange
// and the forest fill: unit_tests/CMakeLists.txt).
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>

namespace {

// Kokkos' header in front of each allocation's data (its record pointer and label).
constexpr std::uintptr_t header_bytes = 128;
constexpr int max_regions = 4096;

struct Region {
  std::uintptr_t begin = 0, end = 0;  // the whole pages inside the data
  std::uintptr_t data = 0;            // where the data starts, for the offset in a report
  char label[64] = {};
  bool used = false;
};

// Fixed storage, so that the signal handler reads it without allocating or locking a mutex.
Region regions[max_regions];
std::atomic_flag lock = ATOMIC_FLAG_INIT;
int open_operations = 0;  // kernels and copies running now
std::uint64_t guarded_allocations = 0, guarded_pages = 0, table_full = 0;
bool enabled = false;
std::regex* wanted = nullptr;
struct sigaction previous_handler;
std::uintptr_t page_bytes = 4096;

struct Locked {
  Locked() {
    while (lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~Locked() { lock.clear(std::memory_order_release); }
};

void protect(const Region& r, bool open) {
  ::mprotect(reinterpret_cast<void*>(r.begin), r.end - r.begin, open ? PROT_READ | PROT_WRITE : PROT_NONE);
}

void protect_all(bool open) {
  for (const Region& r : regions)
    if (r.used) protect(r, open);
}

void write_text(const char* text) { (void)!::write(2, text, std::strlen(text)); }

void write_number(std::uintptr_t value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  char text[24];
  for (int i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  text[n] = '\0';
  write_text(text);
}

// A fault in a guarded allocation is named; the handler the guard found then takes it when the
// access runs again, as it does any fault that is not the guard's. Handlers that hand a fault on
// may hand it back here (a suite's handler restores the one it found, the guard's, and raises the
// signal again): the second time the fault gets the default action, so that nothing loops.
void on_fault(int, siginfo_t* info, void*) {
  static volatile sig_atomic_t handed_on = 0;
  if (handed_on) {
    ::signal(SIGSEGV, SIG_DFL);
    return;
  }
  handed_on = 1;
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (const Region& r : regions) {
    if (!r.used || address < r.begin || address >= r.end) continue;
    write_text("[device memory guard] the host accessed device memory outside a kernel or copy: '");
    write_text(r.label);
    write_text("' at byte ");
    write_number(address - r.data);
    write_text(" of its data\n");
    break;
  }
  ::sigaction(SIGSEGV, &previous_handler, nullptr);
}

// Test suites install their own handlers for each test case: the guard's goes in front again at
// every kernel or copy, keeping whichever it found as the one to hand faults on to.
void install_handler() {
  struct sigaction current;
  ::sigaction(SIGSEGV, nullptr, &current);
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_fault) return;
  previous_handler = current;
  struct sigaction mine {};
  mine.sa_sigaction = on_fault;
  mine.sa_flags = SA_SIGINFO;
  sigemptyset(&mine.sa_mask);
  ::sigaction(SIGSEGV, &mine, nullptr);
}

void operation_begins() {
  if (!enabled) return;
  install_handler();
  Locked locked;
  if (open_operations++ == 0) protect_all(true);
}

void operation_ends() {
  if (!enabled) return;
  Locked locked;
  if (--open_operations == 0) protect_all(false);
}

struct SpaceHandle {
  char name[64];
};

}  // namespace

extern "C" {
void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) {
  const char* labels = std::getenv("KORCH_DEVICE_GUARD_LABELS");
  if (!labels || !*labels) {
    write_text(
        "[device memory guard] KORCH_DEVICE_GUARD_LABELS is not set: give a regular expression of the "
        "labels of device allocations; guarding nothing\n");
    return;
  }
  try {
    wanted = new std::regex(labels, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    std::fprintf(stderr,
                 "[device memory guard] KORCH_DEVICE_GUARD_LABELS '%s' is not a regular expression (%s): "
                 "guarding nothing\n",
                 labels, e.what());
    return;
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) page_bytes = static_cast<std::uintptr_t>(page);
  enabled = true;
  install_handler();
}

void kokkosp_finalize_library() {
  if (!enabled) return;
  Locked locked;
  protect_all(true);
  enabled = false;
  std::fprintf(stderr, "[device memory guard] guarded %llu allocations (%llu pages in all)\n",
               static_cast<unsigned long long>(guarded_allocations), static_cast<unsigned long long>(guarded_pages));
  if (table_full > 0)
    std::fprintf(stderr, "[device memory guard] %llu more were not guarded: more than %d were alive at once\n",
                 static_cast<unsigned long long>(table_full), max_regions);
}

void kokkosp_allocate_data(SpaceHandle, const char* label, const void* ptr, std::uint64_t bytes) {
  if (!enabled || !label || !std::regex_search(label, *wanted)) return;
  // Kokkos reports the allocation with its header or without: the pages inside both are its own.
  const auto at = reinterpret_cast<std::uintptr_t>(ptr);
  const std::uintptr_t begin = (at + header_bytes + page_bytes - 1) / page_bytes * page_bytes;
  const std::uintptr_t end = (at + bytes) / page_bytes * page_bytes;
  if (end <= begin) return;
  Locked locked;
  for (Region& r : regions) {
    if (r.used) continue;
    r.begin = begin;
    r.end = end;
    r.data = at + header_bytes;
    ++guarded_allocations;
    guarded_pages += (end - begin) / page_bytes;
    std::snprintf(r.label, sizeof r.label, "%s", label);
    r.used = true;  // protected when the next kernel or copy ends: Kokkos may still initialize it
    return;
  }
  ++table_full;
}

void kokkosp_deallocate_data(SpaceHandle, const char*, const void* ptr, std::uint64_t) {
  if (!enabled) return;
  const auto data = reinterpret_cast<std::uintptr_t>(ptr) + header_bytes;
  Locked locked;
  for (Region& r : regions)
    if (r.used && r.data == data) {
      protect(r, true);  // the allocator may use the pages next
      r.used = false;
    }
}

void kokkosp_begin_parallel_for(const char*, std::uint32_t, std::uint64_t*) { operation_begins(); }
void kokkosp_end_parallel_for(std::uint64_t) { operation_ends(); }
void kokkosp_begin_parallel_reduce(const char*, std::uint32_t, std::uint64_t*) { operation_begins(); }
void kokkosp_end_parallel_reduce(std::uint64_t) { operation_ends(); }
void kokkosp_begin_parallel_scan(const char*, std::uint32_t, std::uint64_t*) { operation_begins(); }
void kokkosp_end_parallel_scan(std::uint64_t) { operation_ends(); }
void kokkosp_begin_deep_copy(SpaceHandle, const char*, const void*, SpaceHandle, const char*, const void*,
                             std::uint64_t) {
  operation_begins();
}
void kokkosp_end_deep_copy() { operation_ends(); }
}
