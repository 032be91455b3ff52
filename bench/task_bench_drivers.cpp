// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The driver registry of korch-bench-task_bench (see task_bench_drivers.hpp).
#include "task_bench_drivers.hpp"

#include <stdexcept>

namespace korch::bench {

std::vector<std::string> available_drivers() {
  std::vector<std::string> names = {"korch", "korch_pool"};
#if defined(KORCH_BENCH_HAVE_OPENMP)
  names.push_back("openmp");
#endif
#if defined(KORCH_BENCH_HAVE_TBB)
  names.push_back("tbb");
#endif
  return names;
}

std::unique_ptr<TaskBenchDriver> make_driver(const std::string& name, TaskRunner& runner, unsigned threads) {
  if (name == "korch") return make_korch_driver(runner, threads, true);
  if (name == "korch_pool") return make_korch_driver(runner, threads, false);
#if defined(KORCH_BENCH_HAVE_OPENMP)
  if (name == "openmp") return make_openmp_driver(runner, threads);
#endif
#if defined(KORCH_BENCH_HAVE_TBB)
  if (name == "tbb") return make_tbb_driver(runner, threads);
#endif
  throw std::invalid_argument("driver '" + name + "' is not built into this program");
}

}  // namespace korch::bench
