// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parameters of one execution cycle (dt, a time level, a tolerance ...), given to start_cycle
// and handed read-only to every call of the cycle's action routine through its ActionContext.
// Type-erased so that every action routine keeps the one signature; no globals.
#pragma once

#include <korch/error.hpp>
#include <korch/type_name.hpp>

#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace korch {

class ActionParameters {
 public:
  ActionParameters() = default;  // no parameters

  // Holds a copy of `value`; routines read it with get<T>() for the same T. Small trivially
  // copyable values (a time step, a few scalars: up to inline_bytes) are held inline, so that a
  // cycle's parameters cost no heap allocation; others are held once and shared by the copies.
  template <class T, class = std::enable_if_t<!std::is_same_v<std::decay_t<T>, ActionParameters>>>
  explicit ActionParameters(T&& value) : type_(&typeid(std::decay_t<T>)) {
    using V = std::decay_t<T>;
    if constexpr (fits_inline<V>()) {
      new (inline_) V(std::forward<T>(value));
    } else {
      shared_ = std::make_shared<const V>(std::forward<T>(value));
    }
  }

  bool has_value() const noexcept { return type_ != nullptr; }

  template <class T>
  bool holds() const noexcept {
    return type_ != nullptr && *type_ == typeid(T);
  }

  // The held value. Throws korch::Error naming both types when the parameters hold something else.
  template <class T>
  const T& get() const {
    if (!holds<T>()) {
      throw Error::format(
          "action parameters hold {}, but the action routine asked for {}: read them with the type "
          "that was passed to start_cycle",
          held_type_name(), type_name<T>());
    }
    if constexpr (fits_inline<T>()) {
      return *std::launder(reinterpret_cast<const T*>(inline_));
    } else {
      return *static_cast<const T*>(shared_.get());
    }
  }

  // "nothing" when empty.
  std::string held_type_name() const { return type_ ? type_name(*type_) : std::string("nothing"); }

  static constexpr std::size_t inline_bytes = 64;

 private:
  template <class V>
  static constexpr bool fits_inline() {
    return sizeof(V) <= inline_bytes && alignof(V) <= alignof(std::max_align_t) && std::is_trivially_copyable_v<V>;
  }

  alignas(std::max_align_t) unsigned char inline_[inline_bytes] = {};  // trivially copyable: copied bytewise
  std::shared_ptr<const void> shared_;
  const std::type_info* type_ = nullptr;
};

}  // namespace korch
