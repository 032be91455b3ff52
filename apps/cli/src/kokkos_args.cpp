// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// argv split between Kokkos and the program (see kokkos_args.hpp).
#include <korch/cli/kokkos_args.hpp>

#include <CLI/CLI.hpp>

namespace korch::cli {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// Kokkos 3.4 reads these with std::stoi after '=' (a letter there or a missing '=' ends the
// process); --kokkos-num-devices also takes ",SKIP".
void check_kokkos_integer(const std::string& arg) {
  static const char* const names[] = {"--kokkos-threads", "--kokkos-numa",        "--kokkos-device-id",
                                      "--kokkos-device",  "--kokkos-num-devices", "--kokkos-ndevices"};
  for (const char* name : names) {
    const std::string n = name;
    if (!starts_with(arg, n) || (arg.size() > n.size() && arg[n.size()] != '=')) continue;
    const std::string value = arg.size() > n.size() ? arg.substr(n.size() + 1) : std::string();
    const bool list = n == "--kokkos-num-devices" || n == "--kokkos-ndevices";
    std::size_t fields = 0;
    bool ok = true;
    std::size_t begin = 0;
    while (ok) {
      const std::size_t comma = value.find(',', begin);
      const std::string field = value.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
      ok = !field.empty() && field.size() <= 9 && field.find_first_not_of("0123456789") == std::string::npos;
      ++fields;
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    if (!ok || fields > (list ? 2u : 1u))
      throw CLI::ValidationError(n, "Kokkos expects " + n + "=N with N a non-negative integer" +
                                        (list ? " (or N,SKIP)" : "") + ", got '" + arg + "'");
    return;
  }
}

}  // namespace

KokkosArgs::KokkosArgs(int argc, char** argv, bool split) {
  const std::string program = argc > 0 && argv[0] ? argv[0] : "korch";
  kokkos_.push_back(program);
  program_.push_back(program);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {  // the rest belongs to the program, whatever it looks like
      program_.insert(program_.end(), argv + i, argv + argc);
      break;
    }
    if (split && starts_with(arg, "--kokkos-")) {
      check_kokkos_integer(arg);
      kokkos_.push_back(arg);
    } else {
      program_.push_back(arg);
    }
  }
  for (std::string& s : kokkos_) pointers_.push_back(s.data());
  pointers_.push_back(nullptr);
  argc_ = static_cast<int>(kokkos_.size());
}

}  // namespace korch::cli
