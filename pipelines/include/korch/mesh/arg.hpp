// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Arguments of a par_loop: a dat used directly (on the iteration set), a dat used indirectly through
// (map, index), or a global, each with an access mode.
//
//   mesh::arg(q, Access::Read)                 direct: element e of the loop sees q[e]
//   mesh::arg(res, pecell, 1, Access::Inc)     indirect: e sees res[pecell(e, 1)]
//   mesh::arg(rms, Access::Inc)                global (Read for constants; Inc/Min/Max reduce)
//
// The kernel receives one T* per argument (dim consecutive values), in argument order.
#pragma once

#include <korch/mesh/access.hpp>
#include <korch/mesh/dat.hpp>
#include <korch/mesh/global.hpp>
#include <korch/mesh/map.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

namespace korch::mesh {

// What every argument is, whatever its type: used to validate loops, to plan colourings, to compile
// the message-driven device graph and to dump it.
struct ArgInfo {
  enum class Kind { DatDirect, DatIndirect, Global };
  Kind kind = Kind::DatDirect;
  Access access = Access::Read;
  std::shared_ptr<detail::DatCore> dat;        // dat arguments
  std::shared_ptr<detail::GlobalCore> global;  // global arguments
  Map map;                                     // indirect arguments
  int index = -1;                              // indirect arguments
  int dim = 1;
  std::size_t element_bytes = 0;
  const char* scalar = "T";
  // Componentwise operations on one element's value (dim scalars of the argument's type).
  void (*zero)(void* dst) = nullptr;
  void (*inc)(void* dst, const void* src) = nullptr;              // dst += src
  void (*combine)(void* dst, const void* src, Access) = nullptr;  // Inc: +=, Min: min, Max: max

  bool is_dat() const noexcept { return kind != Kind::Global; }
  bool indirect() const noexcept { return kind == Kind::DatIndirect; }
  const std::string& name() const { return is_dat() ? dat->name() : global->name(); }
  // e.g. "dat 'res', INC via map 'pecell'[0]", "dat 'q', READ direct", "global 'rms', INC"
  std::string describe() const;
};

namespace detail {

template <class T, int D>
void zero_value(void* dst) {
  T* d = static_cast<T*>(dst);
  for (int c = 0; c < D; ++c) d[c] = T(0);
}
template <class T, int D>
void inc_value(void* dst, const void* src) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  for (int c = 0; c < D; ++c) d[c] += s[c];
}
template <class T, int D>
void combine_value(void* dst, const void* src, Access access) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  for (int c = 0; c < D; ++c) {
    if (access == Access::Min)
      d[c] = std::min(d[c], s[c]);
    else if (access == Access::Max)
      d[c] = std::max(d[c], s[c]);
    else
      d[c] += s[c];
  }
}
template <class T, int D>
void fill_ops(ArgInfo& info) {
  info.dim = D;
  info.element_bytes = sizeof(T) * D;
  info.scalar = scalar_name(typeid(T));
  info.zero = &zero_value<T, D>;
  info.inc = &inc_value<T, D>;
  info.combine = &combine_value<T, D>;
}

}  // namespace detail

// A dat argument. Indirect is part of the type so that executors address it without a branch.
template <class T, int D, bool Indirect>
struct DatArg {
  using scalar = T;
  static constexpr int dim = D;
  static constexpr bool indirect = Indirect;
  static constexpr bool is_global = false;
  Dat<T, D> dat;
  Map map;
  int index = -1;
  Access access = Access::Read;

  ArgInfo info() const {
    ArgInfo i;
    i.kind = Indirect ? ArgInfo::Kind::DatIndirect : ArgInfo::Kind::DatDirect;
    i.access = access;
    i.dat = dat.impl();
    i.map = map;
    i.index = index;
    detail::fill_ops<T, D>(i);
    return i;
  }
};

template <class T, int D>
struct GlobalArg {
  using scalar = T;
  static constexpr int dim = D;
  static constexpr bool indirect = false;
  static constexpr bool is_global = true;
  Global<T, D> global;
  Access access = Access::Read;

  ArgInfo info() const {
    ArgInfo i;
    i.kind = ArgInfo::Kind::Global;
    i.access = access;
    i.global = global.impl();
    detail::fill_ops<T, D>(i);
    return i;
  }
};

template <class T, int D>
DatArg<T, D, false> arg(const Dat<T, D>& dat, Access access) {
  return DatArg<T, D, false>{dat, Map(), -1, access};
}
template <class T, int D>
DatArg<T, D, true> arg(const Dat<T, D>& dat, const Map& map, int index, Access access) {
  return DatArg<T, D, true>{dat, map, index, access};
}
template <class T, int D>
GlobalArg<T, D> arg(const Global<T, D>& global, Access access) {
  return GlobalArg<T, D>{global, access};
}

}  // namespace korch::mesh
