// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The split of argv between Kokkos and a program's own parser. Kokkos::initialize(argc, argv)
// also takes unprefixed --threads, --numa, --device and --help for itself (and aborts on
// "--threads 2"), so it receives only argv[0] and the --kokkos-* arguments; everything else goes
// to CLI11.
#pragma once

#include <string>
#include <vector>

namespace korch::cli {

class KokkosArgs {
 public:
  // Splits argv. The integer options Kokkos 3.4 reads (--kokkos-threads, --kokkos-numa,
  // --kokkos-device-id, --kokkos-num-devices) must be written --kokkos-NAME=N; anything else
  // throws CLI::ValidationError naming the argument, before Kokkos could stop the process.
  // With `split` false every argument stays the program's (a program that runs no Kokkos).
  KokkosArgs(int argc, char** argv, bool split = true);
  KokkosArgs(const KokkosArgs&) = delete;
  KokkosArgs& operator=(const KokkosArgs&) = delete;

  // For Kokkos::initialize / Kokkos::ScopeGuard (which may remove the arguments it used).
  int& argc() noexcept { return argc_; }
  char** argv() noexcept { return pointers_.data(); }
  // The program's own arguments, argv[0] first (CLI11's parse(argc, argv) form).
  const std::vector<std::string>& program_args() const noexcept { return program_; }

 private:
  std::vector<std::string> kokkos_;  // owns the strings that pointers_ point into
  std::vector<char*> pointers_;      // argv[0], the --kokkos-* arguments, nullptr
  int argc_ = 0;
  std::vector<std::string> program_;
};

}  // namespace korch::cli
