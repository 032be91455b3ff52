// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-configurations: lists the built-in configurations with their slots (what each binds a
// bundle's action to) and, with --dot DIR, writes DIR/NAME.dot, a drawing of each
// (configurations::to_dot). scripts/docs-configurations renders those as docs/images/configurations.
//   korch-configurations                      every built-in and its slots
//   korch-configurations split_itor --json    one, with its JSON text
//   korch-configurations --dot out/           the drawings
#include <korch/cli/program.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/configurations/drawing.hpp>
#include <korch/error.hpp>
#include <korch/output_files.hpp>

#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace {

void print(const std::string& name, bool with_json) {
  std::cout << name << "\n";
  for (const auto& s : korch::configurations::slots(name)) {
    std::string teams;
    for (const auto& t : s.teams) teams += (teams.empty() ? "" : ", ") + t;
    std::cout << "  " << s.name << (s.optional ? " (optional)" : "") << ", team" << (s.teams.size() == 1 ? " " : "s ")
              << teams << ": " << s.description << "\n";
  }
  if (with_json) std::cout << korch::configurations::json(name) << "\n";
}

}  // namespace

int main(int argc, char* argv[]) {
  korch::cli::Program program("korch-configurations",
                              "lists the built-in configurations and the slots a bundle's actions bind to;\n"
                              "writes a Graphviz drawing of each with --dot (docs/configurations.md).",
                              korch::cli::Program::without_kokkos);
  std::vector<std::string> names;
  std::string dot_dir;
  bool with_json = false;
  program.app()
      .add_option("NAME", names, "built-ins to show")
      ->type_name("NAME")
      ->default_str("all")
      ->check(korch::cli::one_of(korch::configurations::names()));
  program.app()
      .add_option("--dot", dot_dir, "write DIR/NAME.dot, a Graphviz drawing, for each built-in shown")
      ->type_name("DIR")
      ->check(korch::cli::non_empty());
  program.app().add_flag("--json", with_json, "print each built-in's JSON text too");
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    if (names.empty()) names = korch::configurations::names();
    if (!dot_dir.empty()) {
      try {
        korch::prepare_output_directory(dot_dir);
      } catch (const korch::Error& e) {
        throw korch::cli::UsageError(std::string("option --dot: ") + e.what());
      }
    }
    for (const auto& name : names) {
      print(name, with_json);
      if (!dot_dir.empty())
        korch::write_text_file_atomically((fs::path(dot_dir) / (name + ".dot")).string(),
                                          korch::configurations::to_dot(korch::configurations::get(name)));
    }
    return 0;
  });
}
