// The parameters of one execution cycle (dt, a time level, a tolerance ...), given to start_cycle
// and handed read-only to every call of the cycle's action routine through its ActionContext.
// Type-erased so that every action routine keeps the one signature; no globals.
#pragma once

#include <korch/error.hpp>
#include <korch/type_name.hpp>

#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace korch {

class ActionParameters {
 public:
  ActionParameters() = default;  // no parameters

  // Holds a copy of `value`; routines read it with get<T>() for the same T.
  template <class T, class = std::enable_if_t<!std::is_same_v<std::decay_t<T>, ActionParameters>>>
  explicit ActionParameters(T&& value)
      : value_(std::make_shared<const std::decay_t<T>>(std::forward<T>(value))),
        type_(&typeid(std::decay_t<T>)) {}

  bool has_value() const noexcept { return value_ != nullptr; }

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
    return *static_cast<const T*>(value_.get());
  }

  // "nothing" when empty.
  std::string held_type_name() const { return type_ ? type_name(*type_) : std::string("nothing"); }

 private:
  std::shared_ptr<const void> value_;
  const std::type_info* type_ = nullptr;
};

}  // namespace korch
