// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "resident_guard_fill.hpp"

#include <korch/error.hpp>
#include <korch/grid_residency.hpp>

#include <string>

namespace korch::detail {

namespace {

using Offsets = Kokkos::View<std::int64_t*, DeviceMemSpace>;
using Buffer = Kokkos::View<double*, DeviceMemSpace>;

Offsets upload(const char* label, const std::vector<std::int64_t>& offsets) {
  Offsets out(std::string(label), offsets.size());
  Kokkos::deep_copy(out, Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                             offsets.data(), offsets.size()));
  return out;
}

void copy_cells(double* base, const Offsets dst, const Offsets src, std::int64_t var_stride, int first, int count) {
  const auto n = static_cast<std::int64_t>(dst.extent(0));
  if (n == 0) return;
  Kokkos::parallel_for(
      "korch guard-cell fill (device)", Kokkos::RangePolicy<DeviceExecSpace>(0, n * count),
      KOKKOS_LAMBDA(std::int64_t index) {
        const std::int64_t var = (first + index / n) * var_stride;
        base[dst(index % n) + var] = base[src(index % n) + var];
      });
}

// buffer(v * n + c) = cell c of variable first + v.
void gather_cells(double* base, const Offsets cells, std::int64_t var_stride, int first, int count,
                  const Buffer buffer) {
  const auto n = static_cast<std::int64_t>(cells.extent(0));
  Kokkos::parallel_for(
      "korch guard-cell staging (device gather)", Kokkos::RangePolicy<DeviceExecSpace>(0, n * count),
      KOKKOS_LAMBDA(std::int64_t index) { buffer(index) = base[cells(index % n) + (first + index / n) * var_stride]; });
}

void scatter_cells(double* base, const Offsets cells, std::int64_t var_stride, int first, int count,
                   const Buffer buffer) {
  const auto n = static_cast<std::int64_t>(cells.extent(0));
  Kokkos::parallel_for(
      "korch guard-cell staging (device scatter)", Kokkos::RangePolicy<DeviceExecSpace>(0, n * count),
      KOKKOS_LAMBDA(std::int64_t index) { base[cells(index % n) + (first + index / n) * var_stride] = buffer(index); });
}

using PinnedBuffer = Kokkos::View<double*, PinnedHostMemSpace>;

// The staging buffers of `size` doubles on each side, kept while the size stays.
void size_buffers(Buffer& device, PinnedBuffer& host, std::size_t size) {
  if (device.extent(0) == size) return;
  device = Buffer(std::string("korch guard-cell staging (device)"), size);
  host = PinnedBuffer(std::string("korch guard-cell staging (host)"), size);
}

}  // namespace

ResidentGuardFill::ResidentGuardFill(const GuardCellPlan& plan, GridResidency& residency, double* host_base,
                                     std::ptrdiff_t var_stride)
    : plan_(plan),
      residency_(residency),
      host_base_(host_base),
      device_base_(residency.device_block(0)),
      var_stride_(var_stride) {
  if (static_cast<std::size_t>(var_stride) != residency.doubles_per_var())
    throw Error::format(
        "guard-cell exchange: the resident grid's device copy keeps {} doubles per variable of a block, its host "
        "copy {}: the two copies must share the grid's layout",
        residency.doubles_per_var(), var_stride);
  for (int b = 0; b < residency.n_blocks(); ++b)
    block_offset_.push_back(static_cast<std::int64_t>(residency.device_block(b) - device_base_));
}

ResidentGuardFill::Staging ResidentGuardFill::staging(const char* label, const std::vector<std::int64_t>& device,
                                                      const std::vector<std::int64_t>& host) const {
  Staging s;
  s.device = upload(label, device);
  s.host = host;
  return s;
}

void ResidentGuardFill::make_copies() {
  std::vector<std::int64_t> dd_dst, dd_src, to_host_dev, to_host_host, to_dev_dev, to_dev_host;
  for (std::size_t b = 0; b < plan_.local.size(); ++b) {
    const bool dst_on_device = sides_[b] != 0;
    for (const CellCopy& c : plan_.local[b]) {
      const bool src_on_device = sides_[static_cast<std::size_t>(c.src_block)] != 0;
      const std::int64_t dst = block_offset_[b] + c.dst;
      const std::int64_t src = block_offset_[static_cast<std::size_t>(c.src_block)] + c.src;
      if (dst_on_device && src_on_device) {
        dd_dst.push_back(dst);
        dd_src.push_back(src);
      } else if (dst_on_device) {
        to_dev_dev.push_back(dst);
        to_dev_host.push_back(src);
      } else if (src_on_device) {
        to_host_dev.push_back(src);
        to_host_host.push_back(dst);
      }
    }
  }
  copies_.device_dst = upload("korch guard fill destinations", dd_dst);
  copies_.device_src = upload("korch guard fill sources", dd_src);
  copies_.to_host = staging("korch guard fill to host", to_host_dev, to_host_host);
  copies_.to_device = staging("korch guard fill to device", to_dev_dev, to_dev_host);
  copies_.send.clear();
  copies_.recv.clear();
  for (const PeerPlan& p : plan_.peers) {
    std::vector<std::int64_t> device, position;
    for (std::size_t c = 0; c < p.send.size(); ++c) {
      const auto b = static_cast<std::size_t>(p.send[c].src_block);
      if (!sides_[b]) continue;
      device.push_back(block_offset_[b] + p.send[c].src);
      position.push_back(static_cast<std::int64_t>(c));
    }
    copies_.send.push_back(staging("korch guard fill sends", device, position));
    device.clear();
    position.clear();
    for (std::size_t c = 0; c < p.recv.size(); ++c) {
      const auto b = static_cast<std::size_t>(p.recv[c].dst_block);
      if (!sides_[b]) continue;
      device.push_back(block_offset_[b] + p.recv[c].dst);
      position.push_back(static_cast<std::int64_t>(c));
    }
    copies_.recv.push_back(staging("korch guard fill receives", device, position));
  }
  copies_sides_ = sides_;
}

void ResidentGuardFill::start(int first, int count) {
  sides_ = residency_.sides(first, count);
  moved_ += residency_.claim(sides_, first, count);
  if (sides_ != copies_sides_) make_copies();
  first_ = first;
  count_ = count;
  copy_cells(device_base_, copies_.device_dst, copies_.device_src, var_stride_, first, count);
  const HostArray grid{host_base_, var_stride_, first};
  moved_.device_to_host += device_to_host(copies_.to_host, grid);
  moved_.host_to_device += host_to_device(copies_.to_device, grid);
  DeviceExecSpace().fence();
}

void ResidentGuardFill::pack(std::size_t peer, double* message) {
  const auto n = static_cast<std::int64_t>(plan_.peers[peer].send.size());
  moved_.device_to_host += device_to_host(copies_.send[peer], HostArray{message, n, 0});
}

void ResidentGuardFill::unpack(std::size_t peer, const double* message) {
  const auto n = static_cast<std::int64_t>(plan_.peers[peer].recv.size());
  // host_to_device only reads the host array.
  moved_.host_to_device += host_to_device(copies_.recv[peer], HostArray{const_cast<double*>(message), n, 0});
  DeviceExecSpace().fence();
}

std::uint64_t ResidentGuardFill::device_to_host(const Staging& s, const HostArray& to) const {
  const std::size_t n = s.host.size();
  if (n == 0) return 0;
  const std::size_t size = n * static_cast<std::size_t>(count_);
  size_buffers(s.device_buffer, s.host_buffer, size);
  gather_cells(device_base_, s.device, var_stride_, first_, count_, s.device_buffer);
  Kokkos::deep_copy(s.host_buffer, s.device_buffer);
  for (int v = 0; v < count_; ++v) {
    double* out = to.base + static_cast<std::int64_t>(to.first + v) * to.var_stride;
    const double* in = s.host_buffer.data() + static_cast<std::size_t>(v) * n;
    for (std::size_t c = 0; c < n; ++c) out[s.host[c]] = in[c];
  }
  return size * sizeof(double);
}

std::uint64_t ResidentGuardFill::host_to_device(const Staging& s, const HostArray& from) const {
  const std::size_t n = s.host.size();
  if (n == 0) return 0;
  const std::size_t size = n * static_cast<std::size_t>(count_);
  size_buffers(s.device_buffer, s.host_buffer, size);
  for (int v = 0; v < count_; ++v) {
    const double* in = from.base + static_cast<std::int64_t>(from.first + v) * from.var_stride;
    double* out = s.host_buffer.data() + static_cast<std::size_t>(v) * n;
    for (std::size_t c = 0; c < n; ++c) out[c] = in[s.host[c]];
  }
  Kokkos::deep_copy(s.device_buffer, s.host_buffer);
  scatter_cells(device_base_, s.device, var_stride_, first_, count_, s.device_buffer);
  return size * sizeof(double);
}

}  // namespace korch::detail
