// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "graphviz.hpp"

#include <korch/error.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <vector>

extern char** environ;

namespace korch::plan_app {

std::string find_dot() {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::istringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/dot";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

void render_png(const std::string& dot, const std::string& dot_file, const std::string& png_file) {
  std::vector<std::string> args{dot, "-Tpng", dot_file, "-o", png_file};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (const int rc = posix_spawn(&pid, dot.c_str(), nullptr, nullptr, argv.data(), environ); rc != 0)
    throw Error::format("cannot start '{}' to draw '{}': error {}", dot, dot_file, rc);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error::format("waiting for '{}' drawing '{}' failed", dot, dot_file);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error::format("'{}' could not draw '{}' as '{}' (status {}): see its message above", dot, dot_file, png_file,
                        status);
}

}  // namespace korch::plan_app
