// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The element of a stream: a fixed-size cell that holds one value of any trivially copyable type of
// at most kItemBytes bytes (double, std::uint8_t, std::complex<float>, a small user struct, ...).
//
// The executors, rings and commit queues move cells and never look inside, so one compiled
// implementation serves every item type. What a cell holds is recorded per component instead (an
// ItemType for what it takes and what it emits), and composition checks that adjacent components
// agree. A cell converts implicitly from and to double, so programs written for double items (the
// untyped leaves) read and write their items as before; typed code stores with Item::of(x) and loads
// with item.as<T>(), or uses the typed facade (korch/streams/typed.hpp), which does both for it.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace korch::streams {

constexpr std::size_t kItemBytes = 16;
constexpr std::size_t kItemAlign = 16;

template <class T>
constexpr void check_item_type() {
  static_assert(std::is_trivially_copyable<T>::value,
                "korch::streams: a stream item type must be trivially copyable (it is copied as bytes "
                "between tasks); pass a handle or an index instead of an owning type");
  static_assert(sizeof(T) <= kItemBytes,
                "korch::streams: a stream item type may have at most kItemBytes (16) bytes; split the "
                "value into several items or pass an index into a table");
  static_assert(alignof(T) <= kItemAlign, "korch::streams: a stream item type may need at most 16-byte alignment");
}

// A 16-byte cell holding one value of a trivially copyable type as its bytes: what Item and Value
// (korch/streams/value.hpp) share; each adds the conversions of the type its programs use most.
template <class Derived>
class Cell {
 public:
  template <class T>
  static Derived of(const T& x) noexcept {
    check_item_type<T>();
    Derived c;
    std::memcpy(static_cast<Cell&>(c).bytes_, &x, sizeof(T));
    return c;
  }
  template <class T>
  T as() const noexcept {
    check_item_type<T>();
    T x;
    std::memcpy(&x, bytes_, sizeof(T));
    return x;
  }

 private:
  alignas(kItemAlign) unsigned char bytes_[kItemBytes] = {};
};

class Item : public Cell<Item> {
 public:
  Item() = default;
  // Untyped programs carry doubles: a double converts to a cell and back without a cast.
  Item(double x) noexcept { *this = of(x); }                 // NOLINT(google-explicit-constructor)
  operator double() const noexcept { return as<double>(); }  // NOLINT(google-explicit-constructor)
  Item& operator+=(double x) noexcept { return *this = static_cast<double>(*this) + x; }
  Item& operator-=(double x) noexcept { return *this = static_cast<double>(*this) - x; }
  Item& operator*=(double x) noexcept { return *this = static_cast<double>(*this) * x; }
  Item& operator/=(double x) noexcept { return *this = static_cast<double>(*this) / x; }
};

static_assert(sizeof(Item) == kItemBytes && std::is_trivially_copyable<Item>::value,
              "a stream item is a plain 16-byte cell");

// Cells from typed values and back.
template <class T>
std::vector<Item> to_items(const std::vector<T>& values) {
  std::vector<Item> v;
  v.reserve(values.size());
  for (const T& x : values) v.push_back(Item::of(x));
  return v;
}
template <class T>
std::vector<T> from_items(const std::vector<Item>& items) {
  std::vector<T> v;
  v.reserve(items.size());
  for (const Item& x : items) v.push_back(x.as<T>());
  return v;
}

// The readable name of an item type in error messages: the standard types by their C++ spelling,
// others by their demangled typeid name. Specialize ItemTypeName<T> to choose another.
std::string demangled_type_name(const std::type_info& t);
template <class T>
struct ItemTypeName {
  static std::string get() { return demangled_type_name(typeid(T)); }
};
#define KORCH_STREAMS_ITEM_TYPE_NAME(T)     \
  template <>                               \
  struct ItemTypeName<T> {                  \
    static std::string get() { return #T; } \
  }
KORCH_STREAMS_ITEM_TYPE_NAME(double);
KORCH_STREAMS_ITEM_TYPE_NAME(float);
KORCH_STREAMS_ITEM_TYPE_NAME(std::uint8_t);
KORCH_STREAMS_ITEM_TYPE_NAME(std::int8_t);
KORCH_STREAMS_ITEM_TYPE_NAME(std::uint16_t);
KORCH_STREAMS_ITEM_TYPE_NAME(std::int16_t);
KORCH_STREAMS_ITEM_TYPE_NAME(std::uint32_t);
KORCH_STREAMS_ITEM_TYPE_NAME(std::int32_t);
KORCH_STREAMS_ITEM_TYPE_NAME(std::uint64_t);
KORCH_STREAMS_ITEM_TYPE_NAME(std::int64_t);
KORCH_STREAMS_ITEM_TYPE_NAME(std::complex<float>);
KORCH_STREAMS_ITEM_TYPE_NAME(std::complex<double>);
#undef KORCH_STREAMS_ITEM_TYPE_NAME

// What a component takes or emits: a type, or `any` for a side that moves no items (ret) or whose
// type is left open.
class ItemType {
 public:
  ItemType() = default;  // any
  template <class T>
  static ItemType of() {
    check_item_type<T>();
    ItemType t;
    t.id_ = &typeid(T);
    t.name_ = ItemTypeName<T>::get();
    return t;
  }
  bool any() const noexcept { return id_ == nullptr; }
  const std::string& name() const noexcept { return name_; }
  // Whether items of one may flow into the other: equal types, or either side any.
  bool compatible(const ItemType& o) const noexcept { return any() || o.any() || *id_ == *o.id_; }
  friend bool operator==(const ItemType& a, const ItemType& b) noexcept {
    return a.any() ? b.any() : (!b.any() && *a.id_ == *b.id_);
  }
  friend bool operator!=(const ItemType& a, const ItemType& b) noexcept { return !(a == b); }

 private:
  const std::type_info* id_ = nullptr;
  std::string name_ = "any";
};

}  // namespace korch::streams
