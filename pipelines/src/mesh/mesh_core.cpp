// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sets, maps, argument descriptions and the checks every par_loop passes when it is built.
#include <korch/error.hpp>
#include <korch/mesh/arg.hpp>
#include <korch/mesh/map.hpp>
#include <korch/mesh/par_loop.hpp>
#include <korch/mesh/set.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <typeinfo>
#include <vector>

namespace korch::mesh {

// ---------------------------------------------------------------- Set
Set::Set(std::string name, int size) {
  if (size < 0) throw Error::format("set '{}': size {} is negative: give the number of elements (>= 0)", name, size);
  impl_ = std::make_shared<const Impl>(Impl{std::move(name), size});
}

const std::string& Set::name() const {
  if (!impl_) throw Error("mesh::Set: use of a null handle: construct the set with a name and a size");
  return impl_->name;
}

int Set::size() const {
  if (!impl_) throw Error("mesh::Set: use of a null handle: construct the set with a name and a size");
  return impl_->size;
}

// ---------------------------------------------------------------- Map
Map::Map(std::string name, Set from, Set to, int arity, std::vector<int> values) {
  if (!from.valid() || !to.valid()) {
    throw Error::format("map '{}': its {} set is a null handle: pass constructed mesh::Sets", name,
                        from.valid() ? "target" : "source");
  }
  if (arity < 1)
    throw Error::format("map '{}' ({} -> {}): arity {} must be at least 1", name, from.name(), to.name(), arity);
  const std::size_t need = static_cast<std::size_t>(from.size()) * static_cast<std::size_t>(arity);
  if (values.size() != need) {
    throw Error::format("map '{}' ({} -> {}): given {} entries, needs {} ({} elements x arity {})", name, from.name(),
                        to.name(), values.size(), need, from.size(), arity);
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0 || values[i] >= to.size()) {
      throw Error::format(
          "map '{}' ({} -> {}): entry {} (element {}, index {}) is {}, outside target set '{}' of size {}: "
          "entries must lie in [0, {})",
          name, from.name(), to.name(), i, i / static_cast<std::size_t>(arity), i % static_cast<std::size_t>(arity),
          values[i], to.name(), to.size(), to.size());
    }
  }
  auto impl = std::make_shared<Impl>();
  impl->name = std::move(name);
  impl->from = std::move(from);
  impl->to = std::move(to);
  impl->arity = arity;
  impl->host = std::move(values);
  impl->device = Kokkos::View<int*, DeviceMemSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "korch::mesh::map " + impl->name), impl->host.size());
  Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> src(impl->host.data(),
                                                                                           impl->host.size());
  Kokkos::deep_copy(impl->device, src);
  impl->injective.assign(static_cast<std::size_t>(impl->arity), -1);
  impl_ = std::move(impl);
}

namespace {
[[noreturn]] void null_map() {
  throw Error("mesh::Map: use of a null handle: construct the map with its sets, arity and values");
}
}  // namespace

const std::string& Map::name() const {
  if (!impl_) null_map();
  return impl_->name;
}
const Set& Map::from() const {
  if (!impl_) null_map();
  return impl_->from;
}
const Set& Map::to() const {
  if (!impl_) null_map();
  return impl_->to;
}
int Map::arity() const {
  if (!impl_) null_map();
  return impl_->arity;
}

bool Map::injective(int index) const {
  if (!impl_) null_map();
  signed char& known = impl_->injective.at(static_cast<std::size_t>(index));
  if (known < 0) {
    std::vector<char> seen(static_cast<std::size_t>(impl_->to.size()), 0);
    known = 1;
    for (int e = 0; e < impl_->from.size(); ++e) {
      char& s = seen[static_cast<std::size_t>((*this)(e, index))];
      if (s) {
        known = 0;
        break;
      }
      s = 1;
    }
  }
  return known == 1;
}

// ---------------------------------------------------------------- names
namespace detail {
const char* scalar_name(const std::type_info& type) noexcept {
  if (type == typeid(double)) return "double";
  if (type == typeid(float)) return "float";
  if (type == typeid(int)) return "int";
  if (type == typeid(long)) return "long";
  if (type == typeid(long long)) return "long long";
  if (type == typeid(unsigned)) return "unsigned";
  if (type == typeid(std::int64_t)) return "int64";
  return "T";
}

std::uint64_t next_loop_uid() noexcept {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace detail

std::string ArgInfo::describe() const {
  if (kind == Kind::Global) {
    if (!global) return fmt::format("global <null>, {}", to_string(access));
    return fmt::format("{} global '{}', {}", global->kind() == GlobalKind::Constant ? "constant" : "mutable",
                       global->name(), to_string(access));
  }
  const std::string dname = dat ? "'" + dat->name() + "'" : std::string("<null>");
  if (kind == Kind::DatDirect) return fmt::format("dat {}, {} direct", dname, to_string(access));
  return fmt::format("dat {}, {} via map '{}'[{}]", dname, to_string(access), map.valid() ? map.name() : "<null>",
                     index);
}

// ---------------------------------------------------------------- validation
namespace detail {

void refuse_stale_halos(const std::string& executor, const std::string& loop, const std::vector<ArgInfo>& args) {
  for (const ArgInfo& a : args)
    if (a.is_dat() && a.dat->halo_dirty())
      throw Error::format(
          "{} executor, par_loop '{}': dat '{}' holds stale values of other ranks' elements (a loop on ranks "
          "modified it): run every loop on ranks with an executor built on the partition "
          "(mesh::RankExecutor, DirectExecutor or MessageExecutor), or call its gather() on the dat first "
          "(DirectExecutor, MessageExecutor: sync()->gather())",
          executor, loop, a.dat->name());
}

void validate_loop(const std::string& name, const Set& set, const std::vector<ArgInfo>& args) {
  if (!set.valid()) throw Error::format("par_loop '{}': the iteration set is a null handle: pass a mesh::Set", name);
  auto fail = [&](std::size_t i, const std::string& why) {
    return Error::format("par_loop '{}' over set '{}': argument {} ({}) {}", name, set.name(), i, args[i].describe(),
                         why);
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgInfo& a = args[i];
    if (a.kind == ArgInfo::Kind::Global) {
      if (!a.global) throw fail(i, "is a null global handle: construct the global first");
      if (a.access == Access::Write || a.access == Access::RW) {
        throw fail(i, "is rejected: every element would assign the same global; use READ, or INC/MIN/MAX to reduce");
      }
      if (a.global->kind() == GlobalKind::Constant && a.access != Access::Read) {
        throw fail(i, fmt::format("is rejected: '{}' is a constant (read-only) global; use Access::Read, or declare "
                                  "it GlobalKind::Mutable",
                                  a.global->name()));
      }
      continue;
    }
    if (!a.dat) throw fail(i, "is a null dat handle: construct the dat first");
    if (a.access == Access::Min || a.access == Access::Max) {
      throw fail(i, "is rejected: MIN/MAX are for globals; use INC, WRITE or RW on a dat");
    }
    if (a.dat->read_only() && a.access != Access::Read) {
      throw fail(i, fmt::format("is rejected: {} on read-only dat '{}'; use Access::Read, or clear read_only()",
                                to_string(a.access), a.dat->name()));
    }
    if (a.kind == ArgInfo::Kind::DatDirect) {
      if (a.dat->set() != set) {
        throw fail(i, fmt::format("is rejected: dat '{}' lives on set '{}', not on the iteration set '{}'; reach it "
                                  "through a map from '{}'",
                                  a.dat->name(), a.dat->set().name(), set.name(), set.name()));
      }
      continue;
    }
    if (!a.map.valid()) throw fail(i, "has a null map handle: construct the map first");
    if (a.map.from() != set) {
      throw fail(i, fmt::format("is rejected: map '{}' goes from set '{}', which is not the iteration set '{}'",
                                a.map.name(), a.map.from().name(), set.name()));
    }
    if (a.index < 0 || a.index >= a.map.arity()) {
      throw fail(i, fmt::format("is rejected: index {} is out of range for map '{}' of arity {} (use 0..{})", a.index,
                                a.map.name(), a.map.arity(), a.map.arity() - 1));
    }
    if (a.map.to() != a.dat->set()) {
      throw fail(i, fmt::format("is rejected: map '{}' leads to set '{}', but dat '{}' lives on set '{}'", a.map.name(),
                                a.map.to().name(), a.dat->name(), a.dat->set().name()));
    }
  }
  // Uses of one dat in one loop must not race (RW/WRITE once, INC only added to).
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgInfo& a = args[i];
    if (!a.is_dat()) continue;
    for (std::size_t j = 0; j < i; ++j) {
      const ArgInfo& b = args[j];
      if (!b.is_dat() || b.dat != a.dat) continue;
      const bool a_assign = a.access == Access::Write || a.access == Access::RW;
      const bool b_assign = b.access == Access::Write || b.access == Access::RW;
      if (a.indirect() && b.indirect() && a_assign && b_assign) {
        throw fail(i, fmt::format("is rejected: argument {} ({}) also {}s dat '{}' indirectly; a dat may have only one "
                                  "indirect WRITE/RW use per loop",
                                  j, b.describe(), to_string(b.access), a.dat->name()));
      }
      if (a_assign || b_assign) {
        throw fail(i, fmt::format("is rejected: argument {} ({}) uses the same dat '{}'; a dat that a loop WRITEs or "
                                  "RWs must have no other use in that loop",
                                  j, b.describe(), a.dat->name()));
      }
      const bool a_inc = a.access == Access::Inc, b_inc = b.access == Access::Inc;
      if (a_inc != b_inc) {
        throw fail(i, fmt::format("is rejected: argument {} ({}) uses the same dat '{}'; INC values may only be added "
                                  "to, so a dat that is INCremented may not also be READ in the same loop",
                                  j, b.describe(), a.dat->name()));
      }
    }
  }
}

}  // namespace detail
}  // namespace korch::mesh
