// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dataflow_command_line.hpp"

#include <algorithm>
#include <climits>

namespace korch::dataflow::demo {

std::unique_ptr<cli::Program> dataflow_command_line(DataflowArgs& a) {
  auto program =
      std::make_unique<cli::Program>("korch-dataflow",
                                     "dataflow pipeline demos. Each subcommand builds a graph, runs it on the default\n"
                                     "execution space, compares the output with a sequential reference and prints\n"
                                     "results and lane utilization.");
  CLI::App& app = program->app();
  cli::add_integer(app, "--n", a.n, "input items", 1, INT_MAX / 2);
  cli::add_integer(app, "--width", a.opt.vector_width, "items per run (default: 64 on hosts, 128 on GPUs)", 1, 1024)
      ->default_str("");
  cli::add_integer(app, "--instances", a.opt.instances,
                   "pipeline instances (default: one per host thread, or per GPU team)", 1, 1 << 20)
      ->default_str("");
  cli::add_real(app, "--scale", a.opt.queue_scale, "queue capacity factor", 1.0);
  app.add_option_function<std::string>(
         "--instance-memory",
         [&a](const std::string& v) {
           a.opt.instance_memory = v == "global"         ? InstanceMemory::global
                                   : v == "team_scratch" ? InstanceMemory::team_scratch
                                                         : InstanceMemory::automatic;
         },
         "where each instance keeps its queues and state: team scratch on GPUs when it fits (automatic), "
         "team_scratch, or global")
      ->type_name("WHERE")
      ->default_str("automatic")
      ->check(cli::one_of({"automatic", "team_scratch", "global"}));
  app.add_flag("--cap-registers", a.opt.cap_registers,
               "GPU builds: launch each pipeline with at most 64 registers per lane (more instances resident, "
               "some state spilled); no effect on host spaces");
  cli::add_integer(app, "--buffer", a.buffer, "parent buffer slots of the enumerating nodes of parser and nested", 1,
                   1 << 20);
  for (const DemoName& d : demo_names) app.add_subcommand(d.name, d.help)->fallthrough();
  app.add_subcommand("all", "every demo above (the default)")->fallthrough();
  program->add_note("Subcommands run in the order given, each once; options may come before or after them.");
  return program;
}

std::vector<std::string> chosen_demos(cli::Program& program) {
  std::vector<std::string> chosen;
  auto choose = [&chosen](const std::string& name) {
    if (std::find(chosen.begin(), chosen.end(), name) == chosen.end()) chosen.push_back(name);
  };
  for (const CLI::App* sub : program.app().get_subcommands())
    for (const DemoName& d : demo_names)
      if (sub->get_name() == "all" || sub->get_name() == d.name) choose(d.name);
  if (chosen.empty())
    for (const DemoName& d : demo_names) choose(d.name);
  return chosen;
}

}  // namespace korch::dataflow::demo
