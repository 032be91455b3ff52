// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A korch program's command line and its catch-all (see program.hpp).
#include <korch/cli/program.hpp>

#include <cstdio>
#include <new>

namespace korch::cli {

namespace {

const char* const kokkos_note =
    "Arguments --kokkos-* (e.g. --kokkos-threads=4, --kokkos-help) go to Kokkos::initialize;\n"
    "no other argument reaches Kokkos.";
const char* const exit_note = "Exit status: 0 success, 1 runtime failure, 2 usage error (nothing was run).";

// One line: a message with newlines (a korch::Error listing choices) joined by "; ".
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (std::size_t pos = text.find('\n'); pos != std::string::npos; pos = text.find('\n', pos))
    text.replace(pos, 1, "; ");
  return text;
}

}  // namespace

Program::Program(std::string name, const std::string& description, KokkosUse kokkos)
    : name_(std::move(name)), kokkos_use_(kokkos), app_(name_ + ": " + description, name_) {
  app_.formatter(std::make_shared<HelpFormatter>());
  app_.set_help_flag("-h,--help", "print this help and exit");
  app_.option_defaults()->always_capture_default();
}

std::string Program::help() {
  std::string footer;
  for (const std::string& note : notes_) footer += note + "\n";
  if (kokkos_use_ == with_kokkos) footer += std::string(kokkos_note) + "\n";
  footer += exit_note;
  app_.footer(footer);
  // The program's own help, also after "SUBCOMMAND --help" (App::help would show the subcommand's).
  return app_.get_formatter()->make_help(&app_, app_.get_name(), CLI::AppFormatMode::Normal);
}

std::optional<int> Program::parse(int argc, char** argv) {
  const std::optional<Outcome> outcome = parse_quietly(argc, argv);
  if (!outcome) return std::nullopt;
  std::fputs(outcome->text.c_str(), outcome->exit_code == exit_success ? stdout : stderr);
  return outcome->exit_code;
}

std::optional<Program::Outcome> Program::parse_quietly(int argc, char** argv) {
  try {
    kokkos_ = std::make_unique<KokkosArgs>(argc, argv, kokkos_use_ == with_kokkos);
    std::vector<std::string> args(kokkos_->program_args().rbegin(), kokkos_->program_args().rend());
    args.pop_back();  // argv[0]; CLI11 takes the rest in reverse order
    app_.parse(args);
  } catch (const CLI::CallForHelp&) {
    return Outcome{exit_success, help()};
  } catch (const CLI::ParseError& e) {
    return Outcome{exit_usage, usage_error_text(describe(e, app_))};
  } catch (const std::exception& e) {
    return Outcome{exit_failure, failure_text(e.what())};
  }
  return std::nullopt;
}

int& Program::kokkos_argc() {
  if (!kokkos_) throw std::logic_error("korch::cli::Program: parse() before kokkos_argc()");
  return kokkos_->argc();
}

char** Program::kokkos_argv() {
  if (!kokkos_) throw std::logic_error("korch::cli::Program: parse() before kokkos_argv()");
  return kokkos_->argv();
}

std::string Program::usage_error_text(const std::string& message) const {
  return name_ + ": " + one_line(message) + "\n(see " + name_ + " --help)\n";
}

std::string Program::failure_text(const std::string& message) const { return name_ + ": " + one_line(message) + "\n"; }

int Program::usage_error(const std::string& message) const {
  std::fputs(usage_error_text(message).c_str(), stderr);
  return exit_usage;
}

int Program::failure(const std::string& message) const {
  std::fputs(failure_text(message).c_str(), stderr);
  return exit_failure;
}

int Program::run(const std::function<int()>& body) noexcept {
  try {
    try {
      return body();
    } catch (const UsageError& e) {
      return usage_error(e.what());
    } catch (const std::bad_alloc& e) {
      return failure(allocation_context_.empty() ? std::string("out of memory (") + e.what() + ")"
                                                 : "out of memory allocating " + allocation_context_);
    } catch (const std::exception& e) {
      return failure(e.what());
    } catch (...) {
      return failure("unknown exception");
    }
  } catch (...) {  // printing failed as well
    return exit_failure;
  }
}

std::string describe(const CLI::ParseError& error, const CLI::App& app) {
  std::string message = error.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&error)) {
    // CLI11 lists them in the order of its reversed argument vector; name them as typed.
    std::string extras;
    for (const std::string& arg : app.remaining(true)) extras += (extras.empty() ? "" : " ") + arg;
    message = "unknown option or argument: " + extras;
    const auto subcommands = app.get_subcommands([](const CLI::App*) { return true; });
    if (!subcommands.empty()) {
      message += " (subcommands:";
      for (std::size_t i = 0; i < subcommands.size(); ++i) message += (i ? ", " : " ") + subcommands[i]->get_name();
      message += ")";
    }
  }
  return message;
}

}  // namespace korch::cli
