// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::Global<T, dim>: a value outside the mesh that loops read (a constant: gamma, CFL number) or
// reduce into (a mutable global: a residual norm), OP2's op_arg_gbl / op_decl_const. A cheap handle.
// Constant globals are properties of the loop graph, mutable globals the state of the one "global"
// device; kernels see them only as arguments (no ambient globals).
#pragma once

#include <korch/error.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace korch::mesh {

enum class GlobalKind { Constant, Mutable };

namespace detail {

const char* scalar_name(const std::type_info& type) noexcept;

class GlobalCore {
 public:
  GlobalCore(std::string name, GlobalKind kind, int dim, std::size_t scalar_bytes, const std::type_info& type)
      : name_(std::move(name)), kind_(kind), dim_(dim), scalar_bytes_(scalar_bytes), type_(&type) {}
  virtual ~GlobalCore() = default;
  GlobalCore(const GlobalCore&) = delete;
  GlobalCore& operator=(const GlobalCore&) = delete;

  const std::string& name() const noexcept { return name_; }
  GlobalKind kind() const noexcept { return kind_; }
  int dim() const noexcept { return dim_; }
  std::size_t element_bytes() const noexcept { return scalar_bytes_ * static_cast<std::size_t>(dim_); }
  const char* scalar_name() const noexcept { return detail::scalar_name(*type_); }
  virtual void* bytes() noexcept = 0;
  virtual std::string value_string() const = 0;

 private:
  std::string name_;
  GlobalKind kind_;
  int dim_;
  std::size_t scalar_bytes_;
  const std::type_info* type_;
};

template <class T, int D>
class GlobalImpl final : public GlobalCore {
 public:
  GlobalImpl(std::string name, GlobalKind kind, const std::array<T, D>& value)
      : GlobalCore(std::move(name), kind, D, sizeof(T), typeid(T)), value(value) {}
  void* bytes() noexcept override { return value.data(); }
  std::string value_string() const override {
    std::string s;
    for (int c = 0; c < D; ++c) {
      if (c) s += ' ';
      if constexpr (std::is_arithmetic_v<T>)
        s += fmt::format("{}", value[c]);
      else
        s += "?";
    }
    return s;
  }
  std::array<T, D> value;
};

}  // namespace detail

template <class T, int D = 1>
class Global {
  static_assert(D >= 1, "mesh::Global: dim must be at least 1");
  static_assert(std::is_trivially_copyable_v<T>, "mesh::Global: T must be trivially copyable");

 public:
  using value_type = T;
  static constexpr int dim = D;

  Global() = default;  // null handle
  Global(std::string name, const std::array<T, D>& value, GlobalKind kind = GlobalKind::Mutable)
      : impl_(std::make_shared<detail::GlobalImpl<T, D>>(std::move(name), kind, value)) {}
  // dim 1 shorthand: Global<double> rms("rms", 0.0);
  template <int E = D, class = std::enable_if_t<E == 1>>
  Global(std::string name, const T& value, GlobalKind kind = GlobalKind::Mutable)
      : Global(std::move(name), std::array<T, 1>{value}, kind) {}

  bool valid() const noexcept { return impl_ != nullptr; }
  const std::string& name() const { return core().name(); }
  GlobalKind kind() const { return core().kind(); }
  bool is_constant() const { return kind() == GlobalKind::Constant; }

  const std::array<T, D>& values() const { return checked().value; }
  const T& value(int c = 0) const { return checked().value[static_cast<std::size_t>(c)]; }
  // Between loops only. Allowed on constants too (a new constant for the next loops).
  void set(const std::array<T, D>& value) { checked().value = value; }
  template <int E = D, class = std::enable_if_t<E == 1>>
  void set(const T& value) {
    checked().value[0] = value;
  }

  const std::shared_ptr<detail::GlobalImpl<T, D>>& impl() const noexcept { return impl_; }
  detail::GlobalImpl<T, D>& checked() const {
    if (!impl_) throw Error("mesh::Global: use of a null handle: construct the global with a name and a value");
    return *impl_;
  }
  detail::GlobalCore& core() const { return checked(); }

 private:
  std::shared_ptr<detail::GlobalImpl<T, D>> impl_;
};

}  // namespace korch::mesh
