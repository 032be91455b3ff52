// korch-plan: plans an operation file (docs/planner.md): writes its kernel graph (JSON and DOT),
// the plan (JSON: ordered bundles with their korch configurations and the work between them) and
// a DOT drawing of each bundle's configuration into the output folder.
//   korch-plan advance.json --out plan-out --teams 6 --threads 4
#include <korch/cli/program.hpp>
#include <korch/error.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/scheduler.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& path) {
  // A folder opens as a stream of no bytes: say what it is rather than "not valid JSON".
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw korch::Error::format("cannot read operation file '{}': it is a folder; give the operation's JSON file", path);
  std::ifstream in(path);
  if (!in) throw korch::Error::format("cannot read operation file '{}'", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) throw korch::Error::format("cannot write '{}'", path.string());
}

}  // namespace

int main(int argc, char* argv[]) {
  korch::cli::Program program("korch-plan",
                              "plans an operation file: writes graph.json and graph.dot (the kernel graph),\n"
                              "plan.json (bundles, their configurations and the work between them) and\n"
                              "bundleN.dot (each bundle's team configuration) into the output folder.",
                              korch::cli::Program::without_kokkos);
  std::string operation_file, out_dir = "plan-out";
  unsigned teams = 6, threads = 4;
  bool no_devices = false, no_fusion = false;
  program.app().add_option("OPERATION", operation_file, "the operation file (JSON, see docs/planner.md)")
      ->type_name("FILE")
      ->required()
      ->check(korch::cli::non_empty());
  program.app().add_option("--out", out_dir, "output folder")->type_name("DIR")->check(korch::cli::non_empty());
  korch::cli::add_integer(program.app(), "--teams", teams, "runtime teams a bundle may use", 1, 1024);
  korch::cli::add_integer(program.app(), "--threads", threads, "threads per team", 1, 1024);
  program.app().add_flag("--no-devices", no_devices, "place every pipeline on host teams");
  program.app().add_flag("--no-fusion", no_fusion, "do not fuse short actions");
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    const auto operation = korch::plan::Operation::from_json(read_file(operation_file));
    korch::plan::SchedulerOptions options;
    options.shape.n_teams = teams;
    options.shape.threads_per_team = threads;
    options.cost.devices = !no_devices;
    options.fuse_short = !no_fusion;
    const auto t0 = std::chrono::steady_clock::now();
    const korch::plan::KernelGraph graph(operation);
    const korch::plan::Plan plan = korch::plan::Scheduler(options).plan(graph);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec) throw korch::Error::format("cannot create output folder '{}': {}", out_dir, ec.message());
    write_file(fs::path(out_dir) / "graph.json", graph.to_json());
    write_file(fs::path(out_dir) / "graph.dot", graph.to_dot());
    write_file(fs::path(out_dir) / "plan.json", plan.to_json());
    const auto bundles = plan.bundles();
    for (std::size_t b = 0; b < bundles.size(); ++b)
      write_file(fs::path(out_dir) / ("bundle" + std::to_string(b) + ".dot"), korch::plan::configuration_dot(bundles[b]->configuration));
    std::cout << "operation '" << operation.name << "': " << graph.actions().size() << " actions, "
              << graph.dependences().size() << " dependences, " << bundles.size() << " bundles, planned in "
              << seconds * 1e3 << " ms; written to " << out_dir << "\n";
    return 0;
  });
}
