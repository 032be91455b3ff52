// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/grid_residency.hpp>

#include <algorithm>

namespace korch {

namespace {
template <class Space>
using Doubles = Kokkos::View<double*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
}  // namespace

GridResidency::GridResidency(const HostData& host)
    : host_(host),
      n_blocks_(static_cast<int>(host.extent(0))),
      n_vars_(static_cast<int>(host.extent(1))),
      doubles_per_var_(host.extent(2) * host.extent(3) * host.extent(4)) {
  try {
    device_ = DeviceData(Kokkos::view_alloc(Kokkos::WithoutInitializing, "korch grid (device copy)"), host.extent(0),
                         host.extent(1), host.extent(2), host.extent(3), host.extent(4));
  } catch (const std::exception& e) {
    throw Error::format(
        "resident grid: cannot allocate the device copy of {} blocks ({} bytes): {}: make the grid non-resident "
        "(GridSpec::resident = false) or smaller",
        n_blocks_, host.span() * sizeof(double), e.what());
  }
  valid_.assign(static_cast<std::size_t>(n_blocks_) * static_cast<std::size_t>(n_vars_), host_bit);
  held_.assign(valid_.size(), 0);
}

std::size_t GridResidency::flag_index(int block, int var) const {
  if (block < 0 || block >= n_blocks_ || var < 0 || var >= n_vars_) {
    throw Error::format(
        "resident grid: block {} variable {} does not exist: the grid has blocks 0..{}, variables 0..{}", block, var,
        n_blocks_ - 1, n_vars_ - 1);
  }
  return static_cast<std::size_t>(block) * static_cast<std::size_t>(n_vars_) + static_cast<std::size_t>(var);
}

double* GridResidency::host_var(int block, int var) const noexcept {
  return host_.data() +
         (static_cast<std::size_t>(block) * static_cast<std::size_t>(n_vars_) + static_cast<std::size_t>(var)) *
             doubles_per_var_;
}

double* GridResidency::device_var(int block, int var) const noexcept {
  return device_.data() +
         (static_cast<std::size_t>(block) * static_cast<std::size_t>(n_vars_) + static_cast<std::size_t>(var)) *
             doubles_per_var_;
}

double* GridResidency::device_block(int block) const noexcept { return device_var(block, 0); }

bool GridResidency::host_valid(int block, int var) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return (valid_[flag_index(block, var)] & host_bit) != 0;
}

bool GridResidency::device_valid(int block, int var) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return (valid_[flag_index(block, var)] & device_bit) != 0;
}

std::uint64_t GridResidency::begin_device_use(const std::vector<int>& blocks, const std::vector<int>& reads,
                                              const std::vector<int>& writes, const DeviceTaskSpace& instance) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::size_t> copied;
  for (const int b : blocks) {
    for (const int v : reads) {
      const std::size_t f = flag_index(b, v);
      if (valid_[f] & device_bit) continue;
      Kokkos::deep_copy(instance, Doubles<DeviceMemSpace>(device_var(b, v), doubles_per_var_),
                        Doubles<Kokkos::HostSpace>(host_var(b, v), doubles_per_var_));
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
  const std::uint64_t bytes = copied.size() * doubles_per_var_ * sizeof(double);
  moved_.host_to_device += bytes;
  return bytes;
}

void GridResidency::end_device_use(const std::vector<int>& blocks, const std::vector<int>& reads,
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

bool GridResidency::held_on_device(int block, int var) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_[flag_index(block, var)] > 0;
}

void GridResidency::mark_device_only_locked(const std::vector<int>& blocks, const std::vector<int>& writes) {
  for (const int b : blocks)
    for (const int v : writes) valid_[flag_index(b, v)] = device_bit;
}

void GridResidency::host_valid_locked(int block, bool host_may_write) {
  for (int v = 0; v < n_vars_; ++v) {
    const std::size_t f = flag_index(block, v);
    if (held_[f] > 0) continue;  // a kernel may be writing it: the device's until the packet is done
    unsigned char& flags = valid_[f];
    if (!(flags & host_bit)) {
      Kokkos::deep_copy(Doubles<Kokkos::HostSpace>(host_var(block, v), doubles_per_var_),
                        Doubles<DeviceMemSpace>(device_var(block, v), doubles_per_var_));
      moved_.device_to_host += doubles_per_var_ * sizeof(double);
      flags |= host_bit;
    }
    if (host_may_write) flags = host_bit;
  }
}

void GridResidency::make_host_valid(int block, bool host_may_write) {
  std::lock_guard<std::mutex> lock(mutex_);
  host_valid_locked(block, host_may_write);
}

void GridResidency::make_all_host_valid(bool host_may_write) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (int b = 0; b < n_blocks_; ++b) host_valid_locked(b, host_may_write);
}

std::vector<unsigned char> GridResidency::sides(int first, int count) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<unsigned char> on_device(static_cast<std::size_t>(n_blocks_), 1);
  for (int b = 0; b < n_blocks_; ++b)
    for (int v = first; v < first + count; ++v)
      if (!(valid_[flag_index(b, v)] & device_bit)) on_device[static_cast<std::size_t>(b)] = 0;
  return on_device;
}

TransferBytes GridResidency::claim(const std::vector<unsigned char>& on_device, int first, int count) {
  std::lock_guard<std::mutex> lock(mutex_);
  TransferBytes bytes;
  const std::uint64_t var_bytes = doubles_per_var_ * sizeof(double);
  for (int b = 0; b < n_blocks_; ++b) {
    const bool device = on_device[static_cast<std::size_t>(b)] != 0;
    const unsigned char side = device ? device_bit : host_bit;
    for (int v = first; v < first + count; ++v) {
      const std::size_t f = flag_index(b, v);
      if (held_[f] > 0)
        throw Error::format(
            "resident grid: variable {} of block {} is being computed by a device packet, yet a whole-grid "
            "operation (a guard-cell fill) asks for it: fill guard cells between cycles, not during one",
            v, b);
      if (!(valid_[f] & side)) {
        const Doubles<DeviceMemSpace> on_dev(device_var(b, v), doubles_per_var_);
        const Doubles<Kokkos::HostSpace> on_host(host_var(b, v), doubles_per_var_);
        if (device) {
          Kokkos::deep_copy(DeviceExecSpace(), on_dev, on_host);
          bytes.host_to_device += var_bytes;
        } else {
          Kokkos::deep_copy(DeviceExecSpace(), on_host, on_dev);
          bytes.device_to_host += var_bytes;
        }
      }
      valid_[f] = side;
    }
  }
  DeviceExecSpace().fence();
  moved_ += bytes;
  return bytes;
}

TransferBytes GridResidency::transfers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return moved_;
}

}  // namespace korch
