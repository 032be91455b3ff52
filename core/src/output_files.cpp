// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/output_files.hpp>

#include <korch/error.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace korch {

namespace {

namespace fs = std::filesystem;

constexpr const char* kTemporaryTag = ".korch-tmp-";

std::string errno_text(int error) { return std::strerror(error); }

// The pid in a temporary's name, or -1 when the name is not one.
long temporary_pid(const std::string& filename) {
  if (filename.size() < 2 || filename[0] != '.') return -1;
  const std::size_t at = filename.rfind(kTemporaryTag);
  if (at == std::string::npos || at == 0) return -1;
  const std::string digits = filename.substr(at + std::strlen(kTemporaryTag));
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stol(digits);
}

// Flushes a written file's data to the disk, so that a crash of the machine after the rename does
// not leave an empty file under the final name either.
void flush_to_disk(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error::format("cannot open '{}' to flush it: {}", path, errno_text(errno));
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0 && error != EINVAL && error != EROFS)  // some file systems cannot fsync; nothing to flush there
    throw Error::format("cannot flush '{}' to disk: {}", path, errno_text(error));
}

}  // namespace

std::string temporary_path(const std::string& path) {
  const fs::path p(path);
  const std::string name = "." + p.filename().string() + kTemporaryTag + std::to_string(static_cast<long>(::getpid()));
  return (p.parent_path() / name).string();
}

bool is_temporary_name(const std::string& filename) { return temporary_pid(filename) > 0; }

void prepare_output_directory(const std::string& dir) {
  if (dir.empty()) throw Error("output directory: the name is empty");
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error::format("output directory '{}' is not a directory", dir);
  fs::create_directories(dir, ec);
  if (ec) throw Error::format("output directory '{}' cannot be created: {}", dir, ec.message());
  if (!fs::is_directory(dir, ec)) throw Error::format("output directory '{}' is not a directory", dir);
  // A probe file: permissions, read-only mounts and full disks show up here rather than after the run.
  const std::string probe = temporary_path((fs::path(dir) / "write-probe").string());
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (f == nullptr) throw Error::format("output directory '{}' is not writable: {}", dir, errno_text(errno));
  const bool written = std::fputs("korch\n", f) >= 0;
  const bool closed = std::fclose(f) == 0;
  const int error = errno;
  std::remove(probe.c_str());
  if (!written || !closed) throw Error::format("output directory '{}' cannot be written: {}", dir, errno_text(error));
  // Temporaries left by killed runs: remove those whose process is gone (a live one may be another
  // run writing into the same directory right now).
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const long pid = temporary_pid(entry.path().filename().string());
    if (pid <= 0 || pid == static_cast<long>(::getpid())) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove(entry.path(), ec);
  }
}

void write_file_atomically(const std::string& path, const std::function<void(const std::string& temporary)>& write) {
  const std::string temporary = temporary_path(path);
  try {
    write(temporary);
    flush_to_disk(temporary);
  } catch (const Error&) {
    std::remove(temporary.c_str());
    throw;
  } catch (const std::exception& e) {
    std::remove(temporary.c_str());
    throw Error::format("cannot write '{}': {}", path, e.what());
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = errno_text(errno);
    std::remove(temporary.c_str());
    throw Error::format("cannot write '{}' (renaming '{}' over it failed): {}", path, temporary, reason);
  }
}

void write_text_file_atomically(const std::string& path, const std::string& text) {
  write_file_atomically(path, [&](const std::string& temporary) {
    std::ofstream out(temporary, std::ios::binary);
    if (!out) throw Error::format("cannot open '{}' for writing: check the folder and its permissions", path);
    out << text;
    out.close();
    if (!out) throw Error::format("writing '{}' failed: check the free space", path);
  });
}

}  // namespace korch
