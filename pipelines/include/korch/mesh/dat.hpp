// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::Dat<T, dim>: `dim` values of type T on every element of a set, OP2's op_dat. A cheap handle
// (copies share the data). The data lives in the backend's device memory and in a host mirror (the
// same allocation on host backends); executors keep the two coherent: the direct executor works on
// the device copy, the sequential and message-driven executors on the host copy.
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/error.hpp>
#include <korch/mesh/set.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace korch::mesh {

namespace detail {

const char* scalar_name(const std::type_info& type) noexcept;  // "double", "int", ... or "T"

// What every Dat has, whatever T and dim: name, set, layout and host/device coherence.
class DatCore {
 public:
  DatCore(std::string name, Set set, int dim, std::size_t scalar_bytes, const std::type_info& type)
      : name_(std::move(name)), set_(std::move(set)), dim_(dim), scalar_bytes_(scalar_bytes), type_(&type) {}
  virtual ~DatCore() = default;
  DatCore(const DatCore&) = delete;
  DatCore& operator=(const DatCore&) = delete;

  const std::string& name() const noexcept { return name_; }
  const Set& set() const noexcept { return set_; }
  int dim() const noexcept { return dim_; }
  std::size_t element_bytes() const noexcept { return scalar_bytes_ * static_cast<std::size_t>(dim_); }
  const char* scalar_name() const noexcept { return detail::scalar_name(*type_); }
  bool read_only() const noexcept { return read_only_; }
  void set_read_only(bool value) noexcept { read_only_ = value; }
  // On ranks: true after a loop modified the dat, until its import halo is refreshed (the values
  // of other ranks' elements held here are stale).
  bool halo_dirty() const noexcept { return halo_dirty_; }
  void set_halo_dirty(bool value) noexcept { halo_dirty_ = value; }

  // Host bytes of the whole dat, made current first (marks the host copy modified when `write`).
  virtual void* host_bytes(bool write) = 0;
  // Device copy made current (marks it modified when `write`).
  virtual void sync_device(bool write) = 0;

 protected:
  enum class Fresh { both, host, device };
  Fresh fresh_ = Fresh::both;

 private:
  std::string name_;
  Set set_;
  int dim_;
  std::size_t scalar_bytes_;
  const std::type_info* type_;
  bool read_only_ = false;
  bool halo_dirty_ = false;
};

template <class T, int D>
class DatImpl final : public DatCore {
 public:
  using device_view = Kokkos::View<T*, DeviceMemSpace>;
  using host_view = typename device_view::host_mirror_type;

  DatImpl(std::string name, Set set)
      : DatCore(std::move(name), set, D, sizeof(T), typeid(T)),
        device_(Kokkos::view_alloc(std::string("korch::mesh::dat ") + this->name()),
                static_cast<std::size_t>(set.size()) * D),
        host_(Kokkos::create_mirror_view(device_)) {}

  // A read copies only when the other side is newer and leaves a newer side newer; a write makes
  // this side the only current one. (Where host and device share memory the copies are no-ops.)
  void* host_bytes(bool write) override {
    if (fresh_ == Fresh::device) {
      Kokkos::deep_copy(host_, device_);
      fresh_ = Fresh::both;
    }
    if (write) fresh_ = Fresh::host;
    return host_.data();
  }
  void sync_device(bool write) override {
    if (fresh_ == Fresh::host) {
      Kokkos::deep_copy(device_, host_);
      fresh_ = Fresh::both;
    }
    if (write) fresh_ = Fresh::device;
  }
  const device_view& device() const noexcept { return device_; }

 private:
  device_view device_;
  host_view host_;
};

}  // namespace detail

template <class T, int D>
class Dat {
  static_assert(D >= 1, "mesh::Dat: dim must be at least 1");
  static_assert(std::is_trivially_copyable_v<T>, "mesh::Dat: T must be trivially copyable");

 public:
  using value_type = T;
  static constexpr int dim = D;

  Dat() = default;  // null handle
  // Zero-initialized, or a copy of `values` (size set.size() * D, element-major).
  Dat(std::string name, Set set, const std::vector<T>& values = {}) {
    if (!set.valid()) throw Error::format("dat '{}': its set is a null handle: pass a constructed mesh::Set", name);
    impl_ = std::make_shared<detail::DatImpl<T, D>>(std::move(name), std::move(set));
    if (!values.empty()) assign(values);
  }

  bool valid() const noexcept { return impl_ != nullptr; }
  const std::string& name() const { return core().name(); }
  const Set& set() const { return core().set(); }
  int size() const { return set().size(); }
  // A read-only dat may only be an argument with Access::Read (checked when a loop is built).
  Dat& read_only(bool value = true) {
    core().set_read_only(value);
    return *this;
  }
  bool is_read_only() const { return core().read_only(); }

  // Host access (synchronizes from the device copy when that is newer).
  const T* host_read() const { return static_cast<const T*>(impl_->host_bytes(false)); }
  T* host_write() { return static_cast<T*>(impl_->host_bytes(true)); }
  std::vector<T> to_vector() const {
    const T* p = host_read();
    return std::vector<T>(p, p + static_cast<std::size_t>(size()) * D);
  }
  void assign(const std::vector<T>& values) {
    const std::size_t n = static_cast<std::size_t>(size()) * D;
    if (values.size() != n) {
      throw Error::format("dat '{}' on set '{}': given {} values, needs {} ({} elements x dim {})", name(),
                          set().name(), values.size(), n, size(), D);
    }
    T* p = host_write();
    for (std::size_t i = 0; i < n; ++i) p[i] = values[i];
  }
  // Fills every component of every element with `value`.
  void fill(const T& value) {
    T* p = host_write();
    for (std::size_t i = 0, n = static_cast<std::size_t>(size()) * D; i < n; ++i) p[i] = value;
  }

  // The device copy, made current (marked modified when `write`).
  Kokkos::View<T*, DeviceMemSpace> device_view(bool write) const {
    impl_->sync_device(write);
    return impl_->device();
  }

  // Type-erased core shared by the executors.
  const std::shared_ptr<detail::DatImpl<T, D>>& impl() const noexcept { return impl_; }
  detail::DatCore& core() const {
    if (!impl_) throw Error("mesh::Dat: use of a null handle: construct the dat with a name and a set");
    return *impl_;
  }

 private:
  std::shared_ptr<detail::DatImpl<T, D>> impl_;
};

}  // namespace korch::mesh
