// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-plan: plans an operation file (docs/planner.md): writes its kernel graph (JSON and DOT),
// the plan (JSON: ordered bundles with their korch configurations and the work between them) and
// a DOT drawing of each bundle's configuration into the output folder, each DOT also as PNG when
// Graphviz is installed; with --driver, a C++ driver that runs the plan (docs/planner.md,
// "Generated drivers").
//   korch-plan advance.json --out plan-out --teams 6 --threads 4 --driver advance_driver.cpp
#include "graphviz.hpp"

#include <korch/cli/program.hpp>
#include <korch/error.hpp>
#include <korch/input_files.hpp>
#include <korch/output_files.hpp>
#include <korch/plan/driver_generator.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/scheduler.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>

namespace fs = std::filesystem;

namespace {

// Far above any operation a person writes; a file beyond it is not one.
constexpr std::size_t max_operation_bytes = std::size_t{64} << 20;

// Under a temporary name, then renamed: a run stopped at any moment leaves no half-written file.
void write_file(const fs::path& path, const std::string& text) {
  korch::write_text_file_atomically(path.string(), text);
}

// Before planning: the output folder made and tried, and the driver's folder there, or a usage
// error naming the option.
void check_destinations(const std::string& out_dir, const std::string& driver_file) {
  try {
    korch::prepare_output_directory(out_dir);
  } catch (const korch::Error& e) {
    throw korch::cli::UsageError(std::string("option --out: ") + e.what());
  }
  if (driver_file.empty()) return;
  const fs::path folder = fs::path(driver_file).parent_path();
  std::error_code ec;
  if (!folder.empty() && !fs::is_directory(folder, ec))
    throw korch::cli::UsageError("option --driver: the folder '" + folder.string() + "' of '" + driver_file +
                                 "' does not exist");
  if (fs::is_directory(driver_file, ec))
    throw korch::cli::UsageError("option --driver: '" + driver_file + "' is a folder; give a file name");
}

// The driver's function name must be a C++ identifier free to use (not a keyword, not reserved).
CLI::Validator identifier() {
  return CLI::Validator([](std::string& text) { return korch::plan::identifier_problem(text); }, "", "identifier");
}

}  // namespace

int main(int argc, char* argv[]) {
  korch::cli::Program program("korch-plan",
                              "plans an operation file: writes graph.json and graph.dot (the kernel graph),\n"
                              "plan.json (bundles, their configurations and the work between them) and\n"
                              "bundleN.dot (each bundle's team configuration) into the output folder, each\n"
                              "DOT file also as PNG when Graphviz's dot is installed; --driver also writes\n"
                              "a C++ driver that runs the plan.",
                              korch::cli::Program::without_kokkos);
  std::string operation_file, out_dir = "plan-out", driver_file, driver_function = "korch_plan_run";
  unsigned teams = 6, threads = 4;
  bool no_devices = false, no_fusion = false, no_png = false;
  program.app()
      .add_option("OPERATION", operation_file, "the operation file (JSON, see docs/planner.md)")
      ->type_name("FILE")
      ->required()
      ->check(korch::cli::non_empty());
  program.app().add_option("--out", out_dir, "output folder")->type_name("DIR")->check(korch::cli::non_empty());
  korch::cli::add_integer(program.app(), "--teams", teams, "runtime teams a bundle may use", 1, 1024);
  korch::cli::add_integer(program.app(), "--threads", threads, "threads per team", 1, 1024);
  program.app().add_flag("--no-devices", no_devices, "place every pipeline on host teams");
  program.app().add_flag("--no-fusion", no_fusion, "do not fuse short actions");
  program.app().add_flag("--no-png", no_png, "do not draw the DOT files as PNG");
  program.app()
      .add_option("--driver", driver_file, "also write a C++ driver that runs the plan to FILE")
      ->type_name("FILE")
      ->check(korch::cli::non_empty());
  program.app()
      .add_option("--driver-function", driver_function, "the driver's function name")
      ->type_name("NAME")
      ->check(identifier());
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    check_destinations(out_dir, driver_file);
    const auto operation = korch::plan::Operation::from_json(
        korch::read_regular_file(operation_file, max_operation_bytes, "operation file"));
    korch::plan::SchedulerOptions options;
    options.shape.n_teams = teams;
    options.shape.threads_per_team = threads;
    options.cost.devices = !no_devices;
    options.fuse_short = !no_fusion;
    const auto t0 = std::chrono::steady_clock::now();
    const korch::plan::KernelGraph graph(operation);
    const korch::plan::Plan plan = korch::plan::Scheduler(options).plan(graph);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    write_file(fs::path(out_dir) / "graph.json", graph.to_json());
    write_file(fs::path(out_dir) / "graph.dot", graph.to_dot());
    write_file(fs::path(out_dir) / "plan.json", plan.to_json());
    const auto bundles = plan.bundles();
    std::vector<std::string> drawings{"graph"};
    for (std::size_t b = 0; b < bundles.size(); ++b) {
      drawings.push_back("bundle" + std::to_string(b));
      write_file(fs::path(out_dir) / (drawings.back() + ".dot"),
                 korch::plan::configuration_dot(bundles[b]->configuration));
    }
    if (!driver_file.empty()) write_file(driver_file, korch::plan::generate_driver(operation, plan, driver_function));
    std::cout << "operation '" << operation.name << "': " << graph.actions().size() << " actions, "
              << graph.dependences().size() << " dependences, " << bundles.size() << " bundles, planned in "
              << seconds * 1e3 << " ms; written to " << out_dir << "\n";
    if (!no_png) {
      const std::string dot = korch::plan_app::find_dot();
      if (dot.empty()) {
        std::cout << "no PNG drawings: Graphviz's 'dot' is not on PATH (Debian package graphviz); the .dot files are "
                     "written\n";
      } else {
        for (const auto& d : drawings)
          korch::plan_app::render_png(dot, (fs::path(out_dir) / (d + ".dot")).string(),
                                      (fs::path(out_dir) / (d + ".png")).string());
        std::cout << "drawn with " << dot << ": " << drawings.size() << " PNG files\n";
      }
    }
    return 0;
  });
}
