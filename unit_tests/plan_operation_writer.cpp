// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Writes an operation file for the generated-driver tests (docs/planner.md, "Generated drivers"):
//   plan_operation_writer running_example          the design's running example
//   plan_operation_writer sided                    A host only, B neutral, C device only: a router splits B
//   plan_operation_writer random SEED ACTIONS      a random operation (test_plan_support.hpp)
#include "test_plan_support.hpp"

#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char* argv[]) {
  const std::string kind = argc > 1 ? argv[1] : "";
  if (argc == 2 && kind == "running_example") {
    std::cout << korch::plan::Operation::from_json(korch::test::running_example).to_json() << "\n";
    return 0;
  }
  if (argc == 2 && kind == "sided") {
    std::cout << korch::plan::Operation::from_json(korch::test::sided_example).to_json() << "\n";
    return 0;
  }
  if (argc == 4 && kind == "random") {
    std::mt19937 rng(static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)));
    std::cout << korch::test::random_operation(rng, std::atoi(argv[3]), std::atoi(argv[2])).to_json() << "\n";
    return 0;
  }
  std::cerr << "usage: plan_operation_writer running_example | sided | random SEED ACTIONS\n";
  return 2;
}
