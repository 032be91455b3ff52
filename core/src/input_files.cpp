// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/input_files.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace korch {

namespace {

struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_regular_file(const std::string& path, std::size_t max_bytes, const std::string& what) {
  const std::string cannot = "cannot read " + what + " '" + path + "': ";
  Descriptor file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (file.fd < 0) throw Error(cannot + std::strerror(errno));
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) throw Error(cannot + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw Error(cannot + "it is a folder: give the " + what + " itself");
  if (!S_ISREG(info.st_mode)) throw Error(cannot + "it is not a regular file (a device, FIFO or socket): give a file");
  auto too_large = [&](const std::string& size) {
    return Error::format("{}it holds {} bytes, more than the {} a {} may have", cannot, size, max_bytes, what);
  };
  if (static_cast<unsigned long long>(info.st_size) > max_bytes) throw too_large(std::to_string(info.st_size));
  std::string text;
  text.reserve(static_cast<std::size_t>(info.st_size));
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(file.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(cannot + std::strerror(errno));
    if (n == 0) break;
    // A file that grows while read is held to the same limit.
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) throw too_large("over " + std::to_string(max_bytes));
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace korch
