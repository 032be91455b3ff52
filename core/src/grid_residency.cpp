// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/grid_residency.hpp>

namespace korch {

namespace {
template <class Space>
using Doubles = Kokkos::View<double*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
}  // namespace

GridResidency::GridResidency(const HostData& host)
    : DeviceResidency(static_cast<int>(host.extent(0)), static_cast<int>(host.extent(1)), Start::valid_on_host),
      host_(host),
      doubles_per_var_(host.extent(2) * host.extent(3) * host.extent(4)) {
  try {
    device_ = DeviceData(Kokkos::view_alloc(Kokkos::WithoutInitializing, "korch grid (device copy)"), host.extent(0),
                         host.extent(1), host.extent(2), host.extent(3), host.extent(4));
  } catch (const std::exception& e) {
    throw Error::format(
        "resident grid: cannot allocate the device copy of {} blocks ({} bytes): {}: make the grid non-resident "
        "(GridSpec::resident = false) or smaller",
        n_blocks(), host.span() * sizeof(double), e.what());
  }
}

double* GridResidency::host_var(int block, int var) const noexcept {
  return host_.data() +
         (static_cast<std::size_t>(block) * static_cast<std::size_t>(n_vars()) + static_cast<std::size_t>(var)) *
             doubles_per_var_;
}

double* GridResidency::device_var(int block, int var) const noexcept {
  return device_.data() +
         (static_cast<std::size_t>(block) * static_cast<std::size_t>(n_vars()) + static_cast<std::size_t>(var)) *
             doubles_per_var_;
}

DeviceResidency::HostSpan GridResidency::host_span(int block) const {
  const std::size_t bytes = static_cast<std::size_t>(n_vars()) * doubles_per_var_ * sizeof(double);
  return {reinterpret_cast<char*>(host_var(block, 0)), bytes};
}

double* GridResidency::device_block(int block) const noexcept { return device_var(block, 0); }

DeviceBlockLayout GridResidency::device_layout(int block) const {
  const auto nj = static_cast<std::int64_t>(host_.extent(3)), nk = static_cast<std::int64_t>(host_.extent(4));
  return {device_block(block), {static_cast<std::int64_t>(doubles_per_var_), nj * nk, nk, 1}};
}

std::uint64_t GridResidency::copy_var_to_device(int block, int var, const DeviceTaskSpace& instance) {
  Kokkos::deep_copy(instance, Doubles<DeviceMemSpace>(device_var(block, var), doubles_per_var_),
                    Doubles<Kokkos::HostSpace>(host_var(block, var), doubles_per_var_));
  return doubles_per_var_ * sizeof(double);
}

std::uint64_t GridResidency::copy_var_to_host(int block, int var) {
  Kokkos::deep_copy(Doubles<Kokkos::HostSpace>(host_var(block, var), doubles_per_var_),
                    Doubles<DeviceMemSpace>(device_var(block, var), doubles_per_var_));
  return doubles_per_var_ * sizeof(double);
}

}  // namespace korch
