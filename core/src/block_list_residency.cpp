// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/backend/strided_copy.hpp>
#include <korch/block_list_residency.hpp>
#include <korch/error.hpp>

#include <algorithm>

namespace korch {

namespace {
template <class Space>
using Doubles = Kokkos::View<double*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

StridedBox var_box(const BlockListResidency::Array& a) {
  return {{a.extent[1], a.extent[2], a.extent[3]}, {a.stride[1], a.stride[2], a.stride[3]}};
}

// Host loop of the device kernels in strided_copy.hpp.
template <bool ToCompact>
void host_strided_copy(double* compact, double* strided, const StridedBox& box) {
  std::int64_t c = 0;
  for (std::int64_t i = 0; i < box.extent[0]; ++i)
    for (std::int64_t j = 0; j < box.extent[1]; ++j)
      for (std::int64_t k = 0; k < box.extent[2]; ++k, ++c) {
        double& cell = strided[i * box.stride[0] + j * box.stride[1] + k * box.stride[2]];
        if constexpr (ToCompact)
          compact[c] = cell;
        else
          cell = compact[c];
      }
}
}  // namespace

BlockListResidency::BlockListResidency(std::string list_name, int n_vars)
    : DeviceResidency(0, n_vars, Start::valid_on_device), name_(std::move(list_name)) {}

void BlockListResidency::add(const Array& array) {
  const auto cells = static_cast<std::size_t>(var_box(array).cells());
  if (cells > device_staging_.extent(0)) {
    device_staging_ =
        DeviceDoubles(Kokkos::view_alloc(Kokkos::WithoutInitializing, "korch block list staging (device)"), cells);
    host_staging_ =
        HostDoubles(Kokkos::view_alloc(Kokkos::WithoutInitializing, "korch block list staging (host)"), cells);
  }
  arrays_.push_back(array);
  mirrors_.emplace_back();
  add_block();
}

std::int64_t BlockListResidency::span(int block) const {
  const Array& a = arrays_[static_cast<std::size_t>(block)];
  std::int64_t last = 0;
  for (int r = 0; r < 4; ++r)
    last += (a.extent[static_cast<std::size_t>(r)] - 1) * a.stride[static_cast<std::size_t>(r)];
  return last + 1;
}

DeviceBlockLayout BlockListResidency::device_layout(int block) const {
  const Array& a = arrays_.at(static_cast<std::size_t>(block));
  return {a.data, a.stride};
}

double* BlockListResidency::host_block(int block) {
  std::lock_guard<std::mutex> lock(mirrors_mutex_);
  HostDoubles& mirror = mirrors_.at(static_cast<std::size_t>(block));
  if (mirror.extent(0) == 0) {
    try {
      mirror = HostDoubles(Kokkos::view_alloc(Kokkos::WithoutInitializing, "korch block list (host copy)"),
                           static_cast<std::size_t>(span(block)));
    } catch (const std::exception& e) {
      throw Error::format("{}: cannot allocate the host copy of block {} ({} bytes): {}", name_, block,
                          span(block) * static_cast<std::int64_t>(sizeof(double)), e.what());
    }
  }
  return mirror.data();
}

DeviceResidency::HostSpan BlockListResidency::host_span(int block) const {
  std::lock_guard<std::mutex> lock(mirrors_mutex_);
  const HostDoubles& mirror = mirrors_.at(static_cast<std::size_t>(block));
  return {reinterpret_cast<char*>(mirror.data()), mirror.extent(0) * sizeof(double)};
}

BlockListResidency::VarCells BlockListResidency::var_cells(int block, int var) {
  const Array& a = arrays_[static_cast<std::size_t>(block)];
  const std::int64_t at = var * a.stride[0];
  return {a.data + at, host_block(block) + at, var_box(a)};
}

std::uint64_t BlockListResidency::copy_var_to_device(int block, int var, const DeviceTaskSpace& instance) {
  const auto [device, host, box] = var_cells(block, var);
  const auto n = static_cast<std::size_t>(box.cells());
  if (box.contiguous()) {
    Kokkos::deep_copy(instance, Doubles<DeviceMemSpace>(device, n), Doubles<Kokkos::HostSpace>(host, n));
  } else {
    host_strided_copy<true>(host_staging_.data(), host, box);
    Kokkos::deep_copy(instance, Doubles<DeviceMemSpace>(device_staging_.data(), n),
                      Doubles<Kokkos::HostSpace>(host_staging_.data(), n));
    scatter_strided(instance, device, device_staging_.data(), box);
    instance.fence();  // the staging buffers serve the next variable
  }
  return n * sizeof(double);
}

std::uint64_t BlockListResidency::copy_var_to_host(int block, int var) {
  const auto [device, host, box] = var_cells(block, var);
  const auto n = static_cast<std::size_t>(box.cells());
  const DeviceTaskSpace instance;
  if (box.contiguous()) {
    Kokkos::deep_copy(instance, Doubles<Kokkos::HostSpace>(host, n), Doubles<DeviceMemSpace>(device, n));
    instance.fence();
  } else {
    gather_strided(instance, device_staging_.data(), device, box);
    Kokkos::deep_copy(instance, Doubles<Kokkos::HostSpace>(host_staging_.data(), n),
                      Doubles<DeviceMemSpace>(device_staging_.data(), n));
    instance.fence();
    host_strided_copy<false>(host_staging_.data(), host, box);
  }
  return n * sizeof(double);
}

}  // namespace korch
