// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::par_loop: a kernel applied to every element of a set, with its arguments (OP2's
// op_par_loop).
//
//   auto loop = mesh::par_loop("res_calc", ResCalc{}, edges,
//                              mesh::arg(x, pedge, 0, Access::Read), ...,
//                              mesh::arg(res, pecell, 1, Access::Inc));
//   executor.run(loop);   // SequentialExecutor, DirectExecutor or MessageExecutor
//
// Building a loop validates it (throws korch::Error naming the loop and the argument); running it
// is the executor's business. A loop is built once and may be run any number of times, on any
// executor. The kernel is a stateless callable (a struct with a KOKKOS_INLINE_FUNCTION operator()
// runs on every backend) taking one T* per argument; it sees nothing but its arguments.
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/device_tuple.hpp>
#include <korch/mesh/arg.hpp>
#include <korch/mesh/set.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace korch::mesh {

// How the direct executor makes indirect INC race-free.
enum class IncMode {
  Colouring,  // elements of one colour share no target; colours run one after another (deterministic)
  Atomics,    // one pass; increments staged per element and added with atomics (order varies)
};

// What the direct executor computed for one loop (see direct_executor.hpp); built on the host once.
struct DirectPlan {
  IncMode inc_mode = IncMode::Colouring;
  bool natural_order = true;        // one colour, elements 0..n-1 (else the elements in `order`)
  std::vector<int> colour_offsets;  // colour c: order(colour_offsets[c] .. colour_offsets[c+1])
  Kokkos::View<int*, DeviceMemSpace> order;
  std::vector<char> staged;                                         // per argument: indirect INC staged + atomic add
  std::vector<Kokkos::View<unsigned char*, DeviceMemSpace>> stage;  // per argument: reduction values per element
  // The elements whose values reduce into globals: the whole set, or (a rank's share) those listed.
  bool reduce_whole_set = true;
  Kokkos::View<int*, DeviceMemSpace> reduced;
  int n_colours() const noexcept { return static_cast<int>(colour_offsets.size()) - 1; }
};

namespace detail {

template <class T, int D>
struct Local {
  T v[D];
};

// ---- per-element addressing in the direct executor (device-copyable) ----
template <class T, int D, bool Indirect>
struct DatAccess {
  using local_type = Local<T, D>;
  T* data = nullptr;
  const int* map = nullptr;
  int arity = 0;
  int index = 0;
  bool staged = false;

  KOKKOS_FORCEINLINE_FUNCTION int target(int e) const {
    if constexpr (Indirect)
      return map[static_cast<std::size_t>(e) * arity + index];
    else
      return e;
  }
  KOKKOS_FORCEINLINE_FUNCTION T* pointer(int e, local_type& l) const {
    if constexpr (Indirect) {
      if (staged) {
        for (int c = 0; c < D; ++c) l.v[c] = T(0);
        return l.v;
      }
    }
    return data + static_cast<std::size_t>(target(e)) * D;
  }
  KOKKOS_FORCEINLINE_FUNCTION void finish(int e, local_type& l) const {
    if constexpr (Indirect) {
      if (staged) {
        T* p = data + static_cast<std::size_t>(target(e)) * D;
        for (int c = 0; c < D; ++c) Kokkos::atomic_add(p + c, l.v[c]);
      }
    }
    (void)e;
    (void)l;
  }
};

// finish() reads the local only when pointer() wrote it (both test `read`); GCC's
// -Wmaybe-uninitialized cannot see that through the inlined kernel, and zeroing the local per
// element would cost time in every loop with a global.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
template <class T, int D>
struct GlobalAccess {
  using local_type = Local<T, D>;
  T value[D];
  bool read = true;    // READ: the kernel gets the captured value itself (no copy per element)
  bool zero = false;   // INC: every element starts from zero (MIN/MAX: from the current value)
  T* stage = nullptr;  // reductions: the element's result, reduced afterwards

  KOKKOS_FORCEINLINE_FUNCTION T* pointer(int, local_type& l) const {
    if (read) return const_cast<T*>(value);
    for (int c = 0; c < D; ++c) l.v[c] = zero ? T(0) : value[c];
    return l.v;
  }
  KOKKOS_FORCEINLINE_FUNCTION void finish(int e, local_type& l) const {
    if (!read && stage) {
      for (int c = 0; c < D; ++c) stage[static_cast<std::size_t>(e) * D + c] = l.v[c];
    }
  }
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

template <class Arg>
struct DirectAccessOf;
template <class T, int D, bool I>
struct DirectAccessOf<DatArg<T, D, I>> {
  using type = DatAccess<T, D, I>;
};
template <class T, int D>
struct DirectAccessOf<GlobalArg<T, D>> {
  using type = GlobalAccess<T, D>;
};

template <class Kernel, class... Acc, std::size_t... I>
KOKKOS_FORCEINLINE_FUNCTION void apply_element(const Kernel& kernel, const korch::detail::DeviceTuple<Acc...>& acc,
                                               int e, std::index_sequence<I...>) {
  using korch::detail::get;
  korch::detail::DeviceTuple<typename Acc::local_type...> local;
  kernel(get<I>(acc).pointer(e, get<I>(local))...);
  (get<I>(acc).finish(e, get<I>(local)), ...);
}

// Host addressing for the sequential executor: INC goes straight into its target, globals are
// updated in place, exactly like a plain loop.
template <class Arg>
struct HostAccess;
template <class T, int D, bool Indirect>
struct HostAccess<DatArg<T, D, Indirect>> {
  T* data;
  const int* map;
  int arity, index;
  T* pointer(int e) const {
    if constexpr (Indirect)
      return data + static_cast<std::size_t>(map[static_cast<std::size_t>(e) * arity + index]) * D;
    else
      return data + static_cast<std::size_t>(e) * D;
  }
};
template <class T, int D>
struct HostAccess<GlobalArg<T, D>> {
  T* value;
  T* pointer(int) const { return value; }
};

void validate_loop(const std::string& name, const Set& set, const std::vector<ArgInfo>& args);
// Throws korch::Error when an argument's dat holds stale values of other ranks' elements (a
// RankExecutor loop modified it on several ranks): an executor for the whole set would read them.
void refuse_stale_halos(const std::string& executor, const std::string& loop, const std::vector<ArgInfo>& args);
std::uint64_t next_loop_uid() noexcept;

}  // namespace detail

// What executors see of a loop, whatever its kernel and argument types.
class ParLoopBase {
 public:
  virtual ~ParLoopBase() = default;

  const std::string& name() const noexcept { return name_; }
  const Set& set() const noexcept { return set_; }
  const std::vector<ArgInfo>& args() const noexcept { return infos_; }
  // Identifies the loop (and its copies) in executors' caches.
  std::uint64_t uid() const noexcept { return uid_; }

  // The executors' entry points.
  virtual void run_sequential() = 0;
  // Sequentially on `elements` (ascending) only; elements with is_owned[e] == 0 (a rank's execute
  // halo) reduce into a scratch copy of the globals, so only owned elements count.
  virtual void run_sequential_elements(const std::vector<int>& elements, const std::vector<char>& is_owned) = 0;
  virtual void run_direct(const DirectPlan& plan) = 0;
  // Calls the kernel once with these argument pointers (message-driven execute handler).
  virtual void call_kernel(void* const* pointers) const = 0;

 protected:
  ParLoopBase(std::string name, Set set, std::vector<ArgInfo> infos)
      : name_(std::move(name)), set_(std::move(set)), infos_(std::move(infos)), uid_(detail::next_loop_uid()) {
    detail::validate_loop(name_, set_, infos_);
  }
  ParLoopBase(const ParLoopBase&) = default;
  ParLoopBase(ParLoopBase&&) = default;
  ParLoopBase& operator=(const ParLoopBase&) = default;
  ParLoopBase& operator=(ParLoopBase&&) = default;

 private:
  std::string name_;
  Set set_;
  std::vector<ArgInfo> infos_;
  std::uint64_t uid_;
};

template <class Kernel, class... Args>
class ParLoop final : public ParLoopBase {
  static_assert(sizeof...(Args) >= 1, "mesh::par_loop needs at least one argument");
  using Seq = std::index_sequence_for<Args...>;

 public:
  ParLoop(std::string name, Kernel kernel, Set set, Args... args)
      : ParLoopBase(std::move(name), std::move(set), std::vector<ArgInfo>{args.info()...}),
        kernel_(std::move(kernel)),
        args_(std::move(args)...) {}

  const Kernel& kernel() const noexcept { return kernel_; }

  void run_sequential() override { run_sequential_impl(Seq{}); }
  void run_sequential_elements(const std::vector<int>& elements, const std::vector<char>& is_owned) override {
    run_elements_impl(elements, is_owned, Seq{});
  }
  void run_direct(const DirectPlan& plan) override { run_direct_impl(plan, Seq{}); }
  void call_kernel(void* const* pointers) const override { call_impl(pointers, Seq{}); }

 private:
  template <std::size_t... I>
  void call_impl(void* const* p, std::index_sequence<I...>) const {
    kernel_(static_cast<typename Args::scalar*>(p[I])...);
  }

  // ---- sequential ----
  template <class T, int D, bool Ind>
  static detail::HostAccess<DatArg<T, D, Ind>> host_access(DatArg<T, D, Ind>& a) {
    T* data = modifies(a.access) ? a.dat.host_write() : const_cast<T*>(a.dat.host_read());
    if constexpr (Ind)
      return {data, a.map.host_data(), a.map.arity(), a.index};
    else
      return {data, nullptr, 0, 0};
  }
  template <class T, int D>
  static detail::HostAccess<GlobalArg<T, D>> host_access(GlobalArg<T, D>& a) {
    return {a.global.checked().value.data()};
  }
  template <std::size_t... I>
  void run_sequential_impl(std::index_sequence<I...>) {
    std::tuple<detail::HostAccess<Args>...> acc{host_access(std::get<I>(args_))...};
    const int n = set().size();
    for (int e = 0; e < n; ++e) kernel_(std::get<I>(acc).pointer(e)...);
  }

  template <class HostAcc, class Scratch>
  static HostAcc redirect(HostAcc a, Scratch&) {
    return a;
  }
  template <class T, int D>
  static detail::HostAccess<GlobalArg<T, D>> redirect(detail::HostAccess<GlobalArg<T, D>> a,
                                                      std::vector<char>& scratch) {
    scratch.resize(sizeof(T) * D);
    std::memcpy(scratch.data(), a.value, sizeof(T) * D);
    return {reinterpret_cast<T*>(scratch.data())};
  }
  template <std::size_t... I>
  void run_elements_impl(const std::vector<int>& elements, const std::vector<char>& is_owned,
                         std::index_sequence<I...>) {
    std::tuple<detail::HostAccess<Args>...> acc{host_access(std::get<I>(args_))...};
    std::array<std::vector<char>, sizeof...(Args)> scratch;
    std::tuple<detail::HostAccess<Args>...> halo{redirect(std::get<I>(acc), scratch[I])...};
    for (const int e : elements) {
      if (is_owned[static_cast<std::size_t>(e)])
        kernel_(std::get<I>(acc).pointer(e)...);
      else
        kernel_(std::get<I>(halo).pointer(e)...);
    }
  }

  // ---- direct (Kokkos) ----
  // Public: nvcc rejects extended (KOKKOS_LAMBDA) lambdas in private or protected member functions.
 public:
  template <class T, int D, bool Ind>
  static detail::DatAccess<T, D, Ind> direct_access(DatArg<T, D, Ind>& a, const DirectPlan& plan, std::size_t i) {
    detail::DatAccess<T, D, Ind> acc;
    acc.data = a.dat.device_view(modifies(a.access)).data();
    if constexpr (Ind) {
      acc.map = a.map.device_view().data();
      acc.arity = a.map.arity();
      acc.index = a.index;
      acc.staged = plan.staged[i] != 0;
    }
    return acc;
  }
  template <class T, int D>
  static detail::GlobalAccess<T, D> direct_access(GlobalArg<T, D>& a, const DirectPlan& plan, std::size_t i) {
    detail::GlobalAccess<T, D> acc;
    for (int c = 0; c < D; ++c) acc.value[c] = a.global.value(c);
    acc.read = a.access == Access::Read;
    acc.zero = a.access == Access::Inc;
    acc.stage = modifies(a.access) ? reinterpret_cast<T*>(plan.stage[i].data()) : nullptr;
    return acc;
  }
  template <class T, int D, bool Ind>
  static void reduce(DatArg<T, D, Ind>&, const DirectPlan&, std::size_t, int) {}
  // Reduces the staged values of the plan's reduced elements (i: the position among them).
  template <class T, int D>
  static void reduce(GlobalArg<T, D>& a, const DirectPlan& plan, std::size_t i, int n) {
    if (!modifies(a.access)) return;
    const T* stage = reinterpret_cast<const T*>(plan.stage[i].data());
    const bool whole = plan.reduce_whole_set;
    const auto listed = plan.reduced;
    const int count = whole ? n : static_cast<int>(plan.reduced.extent(0));
    std::array<T, D> v = a.global.values();
    for (int c = 0; c < D; ++c) {
      T r{};
      const Kokkos::RangePolicy<DeviceExecSpace> range(0, count);
      if (a.access == Access::Inc) {
        Kokkos::parallel_reduce(
            "korch::mesh::reduce_inc", range,
            KOKKOS_LAMBDA(int i, T& s) { s += stage[static_cast<std::size_t>(whole ? i : listed(i)) * D + c]; },
            Kokkos::Sum<T>(r));
        v[c] += r;
      } else if (a.access == Access::Min) {
        Kokkos::parallel_reduce(
            "korch::mesh::reduce_min", range,
            KOKKOS_LAMBDA(int i, T& s) {
              const T x = stage[static_cast<std::size_t>(whole ? i : listed(i)) * D + c];
              if (x < s) s = x;
            },
            Kokkos::Min<T>(r));
        if (count > 0 && r < v[c]) v[c] = r;
      } else {
        Kokkos::parallel_reduce(
            "korch::mesh::reduce_max", range,
            KOKKOS_LAMBDA(int i, T& s) {
              const T x = stage[static_cast<std::size_t>(whole ? i : listed(i)) * D + c];
              if (x > s) s = x;
            },
            Kokkos::Max<T>(r));
        if (count > 0 && r > v[c]) v[c] = r;
      }
    }
    a.global.set(v);
  }

  template <std::size_t... I>
  void run_direct_impl(const DirectPlan& plan, std::index_sequence<I...>) {
    using Acc = korch::detail::DeviceTuple<typename detail::DirectAccessOf<Args>::type...>;
    Acc acc;
    ((korch::detail::get<I>(acc) = direct_access(std::get<I>(args_), plan, I)), ...);
    const Kernel kernel = kernel_;
    const int n = set().size();
    if (plan.natural_order) {
      Kokkos::parallel_for(
          name(), Kokkos::RangePolicy<DeviceExecSpace>(0, n),
          KOKKOS_LAMBDA(int e) { detail::apply_element(kernel, acc, e, Seq{}); });
    } else {
      const auto order = plan.order;
      for (int c = 0; c < plan.n_colours(); ++c) {
        Kokkos::parallel_for(
            name(), Kokkos::RangePolicy<DeviceExecSpace>(plan.colour_offsets[c], plan.colour_offsets[c + 1]),
            KOKKOS_LAMBDA(int i) { detail::apply_element(kernel, acc, order(i), Seq{}); });
      }
    }
    (reduce(std::get<I>(args_), plan, I, n), ...);
    Kokkos::fence();
  }

 private:
  Kernel kernel_;
  std::tuple<Args...> args_;
};

template <class Kernel, class... Args>
ParLoop<Kernel, Args...> par_loop(std::string name, Kernel kernel, Set set, Args... args) {
  return ParLoop<Kernel, Args...>(std::move(name), std::move(kernel), std::move(set), std::move(args)...);
}

}  // namespace korch::mesh
