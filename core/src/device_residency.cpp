// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/backend/host_pages.hpp>
#include <korch/device_residency.hpp>
#include <korch/error.hpp>

#include <algorithm>

namespace korch {

DeviceResidency::DeviceResidency(int n_blocks, int n_vars, Start start)
    : n_blocks_(n_blocks),
      n_vars_(n_vars),
      start_flags_(start == Start::valid_on_host ? host_bit : device_bit),
      valid_(static_cast<std::size_t>(n_blocks) * static_cast<std::size_t>(n_vars), start_flags_),
      held_(valid_.size(), 0),
      host_used_(static_cast<std::size_t>(n_blocks), 0),
      host_kept_(static_cast<std::size_t>(n_blocks), start == Start::valid_on_host ? 1 : 0) {}

void DeviceResidency::add_block() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++n_blocks_;
  valid_.resize(valid_.size() + static_cast<std::size_t>(n_vars_), start_flags_);
  held_.resize(valid_.size(), 0);
  host_used_.push_back(0);
  host_kept_.push_back(start_flags_ == host_bit ? 1 : 0);
}

std::size_t DeviceResidency::flag_index(int block, int var) const {
  if (block < 0 || block >= n_blocks_ || var < 0 || var >= n_vars_) {
    throw Error::format("{}: block {} variable {} does not exist: it has blocks 0..{}, variables 0..{}", kind(), block,
                        var, n_blocks_ - 1, n_vars_ - 1);
  }
  return static_cast<std::size_t>(block) * static_cast<std::size_t>(n_vars_) + static_cast<std::size_t>(var);
}

bool DeviceResidency::host_valid(int block, int var) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return (valid_[flag_index(block, var)] & host_bit) != 0;
}

bool DeviceResidency::device_valid(int block, int var) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return (valid_[flag_index(block, var)] & device_bit) != 0;
}

bool DeviceResidency::held_on_device(int block, int var) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_[flag_index(block, var)] > 0;
}

std::uint64_t DeviceResidency::begin_device_use(const std::vector<int>& blocks, const std::vector<int>& reads,
                                                const std::vector<int>& writes, const DeviceTaskSpace& instance) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::size_t> copied;
  std::uint64_t bytes = 0;
  for (const int b : blocks) {
    for (const int v : reads) {
      const std::size_t f = flag_index(b, v);
      if (valid_[f] & device_bit) continue;
      bytes += copy_var_to_device(b, v, instance);
      copied.push_back(f);
    }
  }
  instance.fence();  // the flags below say the device copy holds the data
  for (const std::size_t f : copied) valid_[f] |= device_bit;
  // From here the action may change what it reads and writes: only the device copy is the truth,
  // even if the cycle fails before end_device_use() (the host copy would otherwise pass for valid
  // next to it). A variable only written keeps its host copy until the action is done, as its
  // device copy may never have held data.
  std::vector<int> read_and_written;
  for (const int v : writes)
    if (std::find(reads.begin(), reads.end(), v) != reads.end()) read_and_written.push_back(v);
  mark_device_only_locked(blocks, read_and_written);
  for (const int b : blocks) {
    for (const int v : reads) ++held_[flag_index(b, v)];
    for (const int v : writes) ++held_[flag_index(b, v)];
  }
  moved_.host_to_device += bytes;
  return bytes;
}

void DeviceResidency::end_device_use(const std::vector<int>& blocks, const std::vector<int>& reads,
                                     const std::vector<int>& writes) {
  std::lock_guard<std::mutex> lock(mutex_);
  mark_device_only_locked(blocks, writes);
  const auto release = [this](std::size_t f) {
    if (held_[f] > 0) --held_[f];
  };
  for (const int b : blocks) {
    for (const int v : reads) release(flag_index(b, v));
    for (const int v : writes) release(flag_index(b, v));
  }
}

void DeviceResidency::mark_device_only_locked(const std::vector<int>& blocks, const std::vector<int>& writes) {
  for (const int b : blocks)
    for (const int v : writes) valid_[flag_index(b, v)] = device_bit;
}

void DeviceResidency::host_used_locked(int block) {
  host_used_[static_cast<std::size_t>(block)] = 1;
  host_kept_[static_cast<std::size_t>(block)] = 1;
}

void DeviceResidency::host_valid_locked(int block, bool host_may_write) {
  host_used_locked(block);
  for (int v = 0; v < n_vars_; ++v) {
    const std::size_t f = flag_index(block, v);
    if (held_[f] > 0) continue;  // a kernel may be writing it: the device's until the packet is done
    unsigned char& flags = valid_[f];
    if (!(flags & host_bit)) {
      moved_.device_to_host += copy_var_to_host(block, v);
      flags |= host_bit;
    }
    if (host_may_write) flags = host_bit;
  }
}

void DeviceResidency::make_host_valid(int block, bool host_may_write) {
  std::lock_guard<std::mutex> lock(mutex_);
  host_valid_locked(block, host_may_write);
}

void DeviceResidency::make_all_host_valid(bool host_may_write) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (int b = 0; b < n_blocks_; ++b) host_valid_locked(b, host_may_write);
}

void DeviceResidency::make_all_device_only() {
  std::lock_guard<std::mutex> lock(mutex_);
  const DeviceTaskSpace instance;
  for (int b = 0; b < n_blocks_; ++b)
    for (int v = 0; v < n_vars_; ++v) {
      const std::size_t f = flag_index(b, v);
      if (held_[f] > 0 || valid_[f] == device_bit) continue;
      if (!(valid_[f] & device_bit)) moved_.host_to_device += copy_var_to_device(b, v, instance);
    }
  instance.fence();
  for (std::size_t f = 0; f < valid_.size(); ++f)
    if (held_[f] == 0) valid_[f] = device_bit;
}

std::vector<unsigned char> DeviceResidency::sides(int first, int count) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<unsigned char> on_device(static_cast<std::size_t>(n_blocks_), 1);
  for (int b = 0; b < n_blocks_; ++b)
    for (int v = first; v < first + count; ++v)
      if (!(valid_[flag_index(b, v)] & device_bit)) on_device[static_cast<std::size_t>(b)] = 0;
  return on_device;
}

TransferBytes DeviceResidency::claim(const std::vector<unsigned char>& on_device, int first, int count) {
  std::lock_guard<std::mutex> lock(mutex_);
  TransferBytes bytes;
  const DeviceTaskSpace instance;
  for (int b = 0; b < n_blocks_; ++b) {
    const bool device = on_device[static_cast<std::size_t>(b)] != 0;
    const unsigned char side = device ? device_bit : host_bit;
    if (!device) host_used_locked(b);
    for (int v = first; v < first + count; ++v) {
      const std::size_t f = flag_index(b, v);
      if (held_[f] > 0)
        throw Error::format(
            "{}: variable {} of block {} is being computed by a device packet, yet a whole-grid "
            "operation (a guard-cell fill) asks for it: fill guard cells between cycles, not during one",
            kind(), v, b);
      if (!(valid_[f] & side)) {
        if (device)
          bytes.host_to_device += copy_var_to_device(b, v, instance);
        else
          bytes.device_to_host += copy_var_to_host(b, v);
      }
      valid_[f] = side;
    }
  }
  instance.fence();
  moved_ += bytes;
  return bytes;
}

bool DeviceResidency::host_copy_unused_locked(int block) const {
  const auto b = static_cast<std::size_t>(block);
  if (host_used_[b] || !host_kept_[b]) return false;
  for (int v = 0; v < n_vars_; ++v) {
    const std::size_t f = flag_index(block, v);
    if (held_[f] > 0 || !(valid_[f] & device_bit)) return false;
  }
  return true;
}

std::size_t DeviceResidency::release_unused_host_copies() {
  std::lock_guard<std::mutex> lock(mutex_);
  // Blocks one after the other in memory (a grid's) are handed back as one range, so that the
  // pages two blocks share go back too.
  std::size_t released = 0;
  HostSpan run;
  const auto flush = [&] {
    if (run.bytes > 0) released += release_host_pages(run.begin, run.bytes);
    run = {};
  };
  for (int b = 0; b < n_blocks_; ++b) {
    if (!host_copy_unused_locked(b)) continue;
    host_kept_[static_cast<std::size_t>(b)] = 0;
    for (int v = 0; v < n_vars_; ++v) valid_[flag_index(b, v)] = device_bit;
    const HostSpan span = host_span(b);
    if (span.bytes == 0) continue;
    if (run.bytes > 0 && run.begin + run.bytes == span.begin) {
      run.bytes += span.bytes;
    } else {
      flush();
      run = span;
    }
  }
  flush();
  std::fill(host_used_.begin(), host_used_.end(), 0);
  return released;
}

std::size_t DeviceResidency::host_bytes_kept() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t bytes = 0;
  for (int b = 0; b < n_blocks_; ++b)
    if (host_kept_[static_cast<std::size_t>(b)]) bytes += host_span(b).bytes;
  return bytes;
}

std::size_t DeviceResidency::host_bytes_resident() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t bytes = 0;
  for (int b = 0; b < n_blocks_; ++b) {
    const HostSpan span = host_span(b);
    bytes += resident_host_bytes(span.begin, span.bytes);
  }
  return bytes;
}

TransferBytes DeviceResidency::transfers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return moved_;
}

}  // namespace korch
