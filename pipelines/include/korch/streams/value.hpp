// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a computer finishes with: a cell of the same size as a stream item (korch/streams/item.hpp)
// that holds one value of any trivially copyable type of at most kItemBytes bytes (std::int64_t,
// double, std::complex<float>, a small user struct, ...).
//
// Like items, the executors move value cells without looking inside; what a computer returns is
// recorded on its component (Comp::value_type), and bind checks it against what the continuation
// declares it reads. A cell converts implicitly from and to std::int64_t, so programs whose
// computers return integers write and read their values as before; other types are stored with
// Value::of(x) and loaded with value.as<T>(), or through the typed facade (korch/streams/typed.hpp).
#pragma once

#include <korch/streams/item.hpp>

#include <cstdint>

namespace korch::streams {

class Value : public Cell<Value> {
 public:
  Value() = default;
  // Integer-valued programs: an integer converts to a cell and back without a cast.
  Value(std::int64_t x) noexcept { *this = of(x); }                      // NOLINT(google-explicit-constructor)
  operator std::int64_t() const noexcept { return as<std::int64_t>(); }  // NOLINT(google-explicit-constructor)
  // Integer arithmetic in place, as on the std::int64_t the cell holds.
  Value& operator+=(std::int64_t x) noexcept { return *this = std::int64_t(*this) + x; }
  Value& operator-=(std::int64_t x) noexcept { return *this = std::int64_t(*this) - x; }
  Value& operator*=(std::int64_t x) noexcept { return *this = std::int64_t(*this) * x; }
  Value& operator/=(std::int64_t x) noexcept { return *this = std::int64_t(*this) / x; }
  Value& operator%=(std::int64_t x) noexcept { return *this = std::int64_t(*this) % x; }
  Value& operator|=(std::int64_t x) noexcept { return *this = std::int64_t(*this) | x; }
  Value& operator&=(std::int64_t x) noexcept { return *this = std::int64_t(*this) & x; }
  Value& operator^=(std::int64_t x) noexcept { return *this = std::int64_t(*this) ^ x; }
  Value& operator<<=(int x) noexcept { return *this = std::int64_t(*this) << x; }
  Value& operator>>=(int x) noexcept { return *this = std::int64_t(*this) >> x; }
  Value& operator++() noexcept { return *this += 1; }
  Value& operator--() noexcept { return *this -= 1; }
  Value operator++(int) noexcept {
    Value old = *this;
    *this += 1;
    return old;
  }
  Value operator--(int) noexcept {
    Value old = *this;
    *this -= 1;
    return old;
  }
};

static_assert(sizeof(Value) == kItemBytes && std::is_trivially_copyable<Value>::value,
              "a computer's value is a plain 16-byte cell");

// The recorded type of values of C++ type T: a Value itself stands for the integers it converts to.
template <class T>
ItemType value_type_of() {
  return std::is_same<T, Value>::value ? ItemType::of<std::int64_t>() : ItemType::of<T>();
}

}  // namespace korch::streams
