// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "resident_guard_fill.hpp"

#include <korch/device_residency.hpp>
#include <korch/error.hpp>

#include <string>

namespace korch::detail {

namespace {

using Blocks = Kokkos::View<int*, DeviceMemSpace>;
using Offsets = Kokkos::View<std::int64_t*, DeviceMemSpace>;
using Buffer = Kokkos::View<double*, DeviceMemSpace>;
using PinnedBuffer = Kokkos::View<double*, PinnedHostMemSpace>;
using Bases = Kokkos::View<std::uintptr_t*, DeviceMemSpace>;

template <class T>
Kokkos::View<T*, DeviceMemSpace> upload_values(const std::string& label, const std::vector<T>& values) {
  Kokkos::View<T*, DeviceMemSpace> out(label, values.size());
  Kokkos::deep_copy(out, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                             values.data(), values.size()));
  return out;
}

// The cell `offset` of variable `var` of `block` on the device.
KOKKOS_INLINE_FUNCTION double& device_cell(const Bases& base, const Offsets& var_stride, int block, std::int64_t offset,
                                           std::int64_t var) {
  return reinterpret_cast<double*>(base(block))[offset + var * var_stride(block)];
}

// The staging buffers of `size` doubles on each side, kept while the size stays.
void size_buffers(Buffer& device, PinnedBuffer& host, std::size_t size) {
  if (device.extent(0) == size) return;
  device = Buffer(std::string("korch guard-cell staging (device)"), size);
  host = PinnedBuffer(std::string("korch guard-cell staging (host)"), size);
}

}  // namespace

namespace {

// The staging's device cells, variable-major (cell c of variable first + v at v * n + c), into its
// device buffer, and back. Free functions: nvcc takes device lambdas only in accessible functions.
// A thread per cell copies every variable of the fill: it reads the cell's block and offset once,
// where a thread per (cell, variable) would read them once per variable (as many bytes as the
// values themselves).
void gather_cells(const Blocks& from_block, const Offsets& from_offset, const Buffer& buffer, const Bases& base,
                  const Offsets& stride, int first, int count) {
  const auto cells = static_cast<std::int64_t>(from_block.extent(0));
  Kokkos::parallel_for(
      "korch guard-cell staging (device gather)", Kokkos::RangePolicy<DeviceExecSpace>(0, cells),
      KOKKOS_LAMBDA(std::int64_t c) {
        const int block = from_block(c);
        const std::int64_t offset = from_offset(c);
        for (int v = 0; v < count; ++v) buffer(v * cells + c) = device_cell(base, stride, block, offset, first + v);
      });
}

void scatter_cells(const Blocks& to_block, const Offsets& to_offset, const Buffer& buffer, const Bases& base,
                   const Offsets& stride, int first, int count) {
  const auto cells = static_cast<std::int64_t>(to_block.extent(0));
  Kokkos::parallel_for(
      "korch guard-cell staging (device scatter)", Kokkos::RangePolicy<DeviceExecSpace>(0, cells),
      KOKKOS_LAMBDA(std::int64_t c) {
        const int block = to_block(c);
        const std::int64_t offset = to_offset(c);
        for (int v = 0; v < count; ++v) device_cell(base, stride, block, offset, first + v) = buffer(v * cells + c);
      });
}

// One kernel over every copy between two device blocks, each thread one cell's variables.
void copy_cells(const Blocks& dst_block, const Offsets& dst_offset, const Blocks& src_block, const Offsets& src_offset,
                const Bases& base, const Offsets& stride, int first, int count) {
  const auto n = static_cast<std::int64_t>(dst_block.extent(0));
  if (n == 0) return;
  Kokkos::parallel_for(
      "korch guard-cell fill (device)", Kokkos::RangePolicy<DeviceExecSpace>(0, n), KOKKOS_LAMBDA(std::int64_t c) {
        const int to = dst_block(c), from = src_block(c);
        const std::int64_t to_offset = dst_offset(c), from_offset = src_offset(c);
        for (int v = 0; v < count; ++v)
          device_cell(base, stride, to, to_offset, first + v) = device_cell(base, stride, from, from_offset, first + v);
      });
}

}  // namespace

ResidentGuardFill::ResidentGuardFill(const GuardCellPlan& plan, DeviceResidency& residency,
                                     const std::vector<double*>& host_base,
                                     const std::vector<std::ptrdiff_t>& var_stride)
    : plan_(plan), residency_(residency), host_base_(host_base), var_stride_(var_stride) {
  std::vector<std::uintptr_t> bases;
  std::vector<std::int64_t> strides;
  for (int b = 0; b < residency.n_blocks(); ++b) {
    const DeviceBlockLayout layout = residency.device_layout(b);
    if (layout.stride[0] != var_stride[static_cast<std::size_t>(b)])
      throw Error::format(
          "guard-cell exchange: block {}'s device copy keeps {} doubles between variables, its host copy {}: the two "
          "copies must share the block's layout",
          b, layout.stride[0], var_stride[static_cast<std::size_t>(b)]);
    bases.push_back(reinterpret_cast<std::uintptr_t>(layout.data));
    strides.push_back(layout.stride[0]);
  }
  device_base_ = upload_values<std::uintptr_t>("korch guard fill block addresses", bases);
  device_var_stride_ = upload_values<std::int64_t>("korch guard fill variable strides", strides);
}

ResidentGuardFill::DeviceCells ResidentGuardFill::upload(const char* label, const std::vector<CellCopy>& cells) const {
  std::vector<int> blocks;
  std::vector<std::int64_t> offsets;
  for (const CellCopy& c : cells) {
    blocks.push_back(c.dst_block);
    offsets.push_back(static_cast<std::int64_t>(c.dst));
  }
  return {upload_values<int>(std::string(label) + " (blocks)", blocks),
          upload_values<std::int64_t>(std::string(label) + " (offsets)", offsets)};
}

void ResidentGuardFill::make_copies() {
  // Each list names cells as (dst_block, dst): a block and an offset in it, or a message position.
  std::vector<CellCopy> dd_dst, dd_src, to_host_dev, to_host_host, to_dev_dev, to_dev_host;
  const auto cell = [](int block, std::ptrdiff_t offset) { return CellCopy{block, -1, offset, 0}; };
  for (std::size_t b = 0; b < plan_.local.size(); ++b) {
    const bool dst_on_device = sides_[b] != 0;
    for (const CellCopy& c : plan_.local[b]) {
      const bool src_on_device = sides_[static_cast<std::size_t>(c.src_block)] != 0;
      const CellCopy dst = cell(static_cast<int>(b), c.dst), src = cell(c.src_block, c.src);
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
  copies_.to_host = Staging{upload("korch guard fill to host", to_host_dev), to_host_host, {}, {}};
  copies_.to_device = Staging{upload("korch guard fill to device", to_dev_dev), to_dev_host, {}, {}};
  copies_.send.clear();
  copies_.recv.clear();
  for (const PeerPlan& p : plan_.peers) {
    std::vector<CellCopy> device, position;
    for (std::size_t c = 0; c < p.send.size(); ++c) {
      if (!sides_[static_cast<std::size_t>(p.send[c].src_block)]) continue;
      device.push_back(cell(p.send[c].src_block, p.send[c].src));
      position.push_back(cell(-1, static_cast<std::ptrdiff_t>(c)));
    }
    copies_.send.push_back(Staging{upload("korch guard fill sends", device), position, {}, {}});
    device.clear();
    position.clear();
    for (std::size_t c = 0; c < p.recv.size(); ++c) {
      if (!sides_[static_cast<std::size_t>(p.recv[c].dst_block)]) continue;
      device.push_back(cell(p.recv[c].dst_block, p.recv[c].dst));
      position.push_back(cell(-1, static_cast<std::ptrdiff_t>(c)));
    }
    copies_.recv.push_back(Staging{upload("korch guard fill receives", device), position, {}, {}});
  }
  copies_sides_ = sides_;
}

void ResidentGuardFill::start(int first, int count) {
  sides_ = residency_.sides(first, count);
  moved_ += residency_.claim(sides_, first, count);
  if (sides_ != copies_sides_) make_copies();
  first_ = first;
  count_ = count;
  copy_cells(copies_.device_dst.block, copies_.device_dst.offset, copies_.device_src.block, copies_.device_src.offset,
             device_base_, device_var_stride_, first, count);
  moved_.device_to_host += device_to_host(copies_.to_host, nullptr, 0);
  moved_.host_to_device += host_to_device(copies_.to_device, nullptr, 0);
  DeviceExecSpace().fence();
}

void ResidentGuardFill::pack(std::size_t peer, double* message) {
  moved_.device_to_host +=
      device_to_host(copies_.send[peer], message, static_cast<std::int64_t>(plan_.peers[peer].send.size()));
}

void ResidentGuardFill::unpack(std::size_t peer, const double* message) {
  moved_.host_to_device +=
      host_to_device(copies_.recv[peer], message, static_cast<std::int64_t>(plan_.peers[peer].recv.size()));
  DeviceExecSpace().fence();
}

// A host cell of the staging: in a block's host copy, or in the message (variable-major, the
// fill's variables only, `n` cells each).
double& ResidentGuardFill::host_cell(const CellCopy& cell, int v, double* message, std::int64_t n) const {
  if (cell.dst_block < 0) return message[static_cast<std::int64_t>(v) * n + cell.dst];
  const auto b = static_cast<std::size_t>(cell.dst_block);
  return host_base_[b][static_cast<std::ptrdiff_t>(first_ + v) * var_stride_[b] + cell.dst];
}

void ResidentGuardFill::gather_on_device(const Staging& s) const {
  size_buffers(s.device_buffer, s.host_buffer, s.host.size() * static_cast<std::size_t>(count_));
  gather_cells(s.device.block, s.device.offset, s.device_buffer, device_base_, device_var_stride_, first_, count_);
}

void ResidentGuardFill::scatter_on_device(const Staging& s) const {
  scatter_cells(s.device.block, s.device.offset, s.device_buffer, device_base_, device_var_stride_, first_, count_);
}

std::uint64_t ResidentGuardFill::device_to_host(const Staging& s, double* message, std::int64_t message_cells) const {
  const std::size_t n = s.host.size();
  if (n == 0) return 0;
  gather_on_device(s);
  Kokkos::deep_copy(s.host_buffer, s.device_buffer);
  for (int v = 0; v < count_; ++v) {
    const double* in = s.host_buffer.data() + static_cast<std::size_t>(v) * n;
    for (std::size_t c = 0; c < n; ++c) host_cell(s.host[c], v, message, message_cells) = in[c];
  }
  return n * static_cast<std::size_t>(count_) * sizeof(double);
}

std::uint64_t ResidentGuardFill::host_to_device(const Staging& s, const double* message,
                                                std::int64_t message_cells) const {
  const std::size_t n = s.host.size();
  if (n == 0) return 0;
  size_buffers(s.device_buffer, s.host_buffer, n * static_cast<std::size_t>(count_));
  for (int v = 0; v < count_; ++v) {
    double* out = s.host_buffer.data() + static_cast<std::size_t>(v) * n;
    // host_cell only reads here.
    for (std::size_t c = 0; c < n; ++c) out[c] = host_cell(s.host[c], v, const_cast<double*>(message), message_cells);
  }
  Kokkos::deep_copy(s.device_buffer, s.host_buffer);
  scatter_on_device(s);
  return n * static_cast<std::size_t>(count_) * sizeof(double);
}

// A message goes straight from device memory when MPI may read it there and every cell of it is in
// a device block: its staging then lists the message's positions in order, so the staging's
// device buffer is laid out as the message.
bool ResidentGuardFill::whole_message_on_device(const Staging& s, std::size_t message_cells) const {
  return direct_messages_ && message_cells > 0 && s.host.size() == message_cells;
}

double* ResidentGuardFill::send_buffer_on_device(std::size_t peer) {
  const Staging& s = copies_.send[peer];
  if (!whole_message_on_device(s, plan_.peers[peer].send.size())) return nullptr;
  gather_on_device(s);
  DeviceExecSpace().fence();  // MPI reads the buffer next
  return s.device_buffer.data();
}

double* ResidentGuardFill::receive_buffer_on_device(std::size_t peer) {
  const Staging& s = copies_.recv[peer];
  if (!whole_message_on_device(s, plan_.peers[peer].recv.size())) return nullptr;
  size_buffers(s.device_buffer, s.host_buffer, s.host.size() * static_cast<std::size_t>(count_));
  return s.device_buffer.data();
}

bool ResidentGuardFill::unpack_on_device(std::size_t peer) {
  const Staging& s = copies_.recv[peer];
  if (!whole_message_on_device(s, plan_.peers[peer].recv.size())) return false;
  scatter_on_device(s);
  DeviceExecSpace().fence();
  return true;
}

}  // namespace korch::detail
