// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/backend/host_pages.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace korch {

namespace {
// The whole pages inside [begin, begin + bytes): their first address and their length.
struct PageRange {
  std::uintptr_t first = 0;
  std::size_t bytes = 0;
};

PageRange whole_pages(const void* begin, std::size_t bytes) noexcept {
  const std::uintptr_t page = host_page_bytes();
  const auto lo = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t first = (lo + page - 1) / page * page;
  const std::uintptr_t end = (lo + bytes) / page * page;
  if (end <= first) return {};
  return {first, static_cast<std::size_t>(end - first)};
}
}  // namespace

std::size_t host_page_bytes() noexcept {
  static const std::size_t bytes = [] {
    const long page = ::sysconf(_SC_PAGESIZE);
    return page > 0 ? static_cast<std::size_t>(page) : std::size_t{4096};
  }();
  return bytes;
}

std::size_t release_host_pages(void* begin, std::size_t bytes) noexcept {
  const PageRange r = whole_pages(begin, bytes);
  if (r.bytes == 0) return 0;
  // MADV_DONTNEED, not MADV_FREE: the pages go back now, and a later access sees zeros at once
  // rather than possibly the old contents, so a missing copy back shows in the tests.
  if (::madvise(reinterpret_cast<void*>(r.first), r.bytes, MADV_DONTNEED) != 0) return 0;
  return r.bytes;
}

std::size_t resident_host_bytes(const void* begin, std::size_t bytes) noexcept {
  const PageRange r = whole_pages(begin, bytes);
  if (r.bytes == 0) return 0;
  const std::size_t page = host_page_bytes();
  std::vector<unsigned char> in_core(r.bytes / page);
  if (::mincore(reinterpret_cast<void*>(r.first), r.bytes, in_core.data()) != 0) return 0;
  std::size_t resident = 0;
  for (const unsigned char c : in_core) resident += (c & 1u) ? page : 0;
  return resident;
}

}  // namespace korch
