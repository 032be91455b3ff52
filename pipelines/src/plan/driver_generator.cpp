// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/plan/driver_generator.hpp>
#include <korch/plan/plan_check.hpp>
#include <korch/plan/stage_routine.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <set>

namespace korch::plan {

namespace {

// A C++ string literal holding `text`: printable characters as they are, the rest in octal.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\{:03o}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// JSON as a raw string literal where it can be (readable in the driver), quoted otherwise.
std::string json_literal(const std::string& text) {
  if (text.find(")korch\"") == std::string::npos) return "R\"korch(" + text + ")korch\"";
  return quoted(text);
}

std::string name_list(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const auto& n : names) q.push_back(quoted(n));
  return fmt::format("{{{}}}", fmt::join(q, ", "));
}

const char* const keywords[] = {
    "alignas",     "alignof",   "and",        "and_eq",    "asm",      "auto",         "bitand",
    "bitor",       "bool",      "break",      "case",      "catch",    "char",         "char8_t",
    "char16_t",    "char32_t",  "class",      "compl",     "concept",  "const",        "consteval",
    "constexpr",   "constinit", "const_cast", "continue",  "co_await", "co_return",    "co_yield",
    "decltype",    "default",   "delete",     "do",        "double",   "dynamic_cast", "else",
    "enum",        "explicit",  "export",     "extern",    "false",    "float",        "for",
    "friend",      "goto",      "if",         "inline",    "int",      "long",         "mutable",
    "namespace",   "new",       "noexcept",   "not",       "not_eq",   "nullptr",      "operator",
    "or",          "or_eq",     "private",    "protected", "public",   "register",     "reinterpret_cast",
    "requires",    "return",    "short",      "signed",    "sizeof",   "static",       "static_assert",
    "static_cast", "struct",    "switch",     "template",  "this",     "thread_local", "throw",
    "true",        "try",       "typedef",    "typeid",    "typename", "union",        "unsigned",
    "using",       "virtual",   "void",       "volatile",  "wchar_t",  "while",        "xor",
    "xor_eq"};

std::string pipeline_summary(const PlannedPipeline& p) {
  std::vector<std::string> stages;
  for (const auto& s : p.stages) stages.push_back(s.routine);
  const char* where = p.placement.placement == Placement::host     ? "on host teams"
                      : p.placement.placement == Placement::device ? "on device teams"
                                                                   : "split between host and device teams";
  return fmt::format("{} {}", fmt::join(stages, " -> "), where);
}

}  // namespace

std::string identifier_problem(const std::string& name) {
  const auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ||
      !std::all_of(name.begin(), name.end(), is_word))
    return fmt::format("'{}' is not a C++ identifier: use letters, digits and '_', not starting with a digit", name);
  if (std::find(std::begin(keywords), std::end(keywords), name) != std::end(keywords))
    return fmt::format("'{}' is a C++ keyword: choose another name", name);
  if (name[0] == '_' || name.find("__") != std::string::npos)
    return fmt::format(
        "'{}' is reserved to the C++ implementation (a leading '_' or a double '__'): choose another name", name);
  return "";
}

std::string generate_driver(const Operation& operation, const Plan& plan, const std::string& function) {
  if (const std::string problem = identifier_problem(function); !problem.empty())
    throw Error::format("driver generator: function name {}", problem);
  check_plan(KernelGraph(operation), plan);
  std::vector<std::string> actions;
  int widest = 0;
  std::set<int> levels;
  for (const ActionDeclaration* a : operation.actions()) {
    actions.push_back(a->action);
    for (const auto& r : a->reads) widest = std::max(widest, r.stencil);
    if (a->iterator.kind == IteratorKind::level) levels.insert(a->iterator.level);
  }
  auto indices = [&](const std::vector<std::string>& variables) {
    std::vector<int> out;
    for (const auto& v : variables) out.push_back(operation.variable_index(v));
    return fmt::format("{{{}}}", fmt::join(out, ", "));
  };

  const std::string signature = fmt::format(
      "void {}(korch::Runtime& runtime, korch::DataSource& source, const korch::plan::ActionRegistry& registry)",
      function);
  std::string out;
  out += fmt::format(
      "// Generated by korch-plan from the plan of operation '{}': runs the plan bundle by bundle on a\n"
      "// korch::Runtime; the action bodies and the hooks between bundles come from the registry the\n"
      "// program links (docs/planner.md, \"Generated drivers\"). Plan again rather than edit.\n"
      "#include <korch/plan/driver_support.hpp>\n\n"
      "{};\n\n{} {{\n"
      "  namespace driver = korch::plan::driver;\n"
      "  const char* const operation = {};\n"
      "  driver::check(registry, source, operation, {}, {}, {}, {{{}}});\n"
      "  driver::PendingFills pending;  // fills inside the next bundle's cycle with hooks.filling_order\n"
      "  (void)runtime;\n",
      operation.name, signature, signature, quoted(operation.name), name_list(actions), operation.variables.size(),
      widest, fmt::join(levels, ", "));
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    if (step.kind == StepKind::guard_fill) {
      out += fmt::format("  // step {}: fill the guard cells of {}\n", i, fmt::join(step.variables, ", "));
      out += fmt::format("  pending.fill_guards(registry, source, operation, {});\n", indices(step.variables));
      continue;
    }
    if (step.kind == StepKind::reduction) {
      out += fmt::format("  // step {}: reduction '{}' over {}\n", i, step.name, fmt::join(step.variables, ", "));
      out += "  pending.flush(registry, source, operation);\n";
      out += fmt::format("  driver::reduce(registry, source, operation, {}, {});\n", quoted(step.name),
                         indices(step.variables));
      continue;
    }
    const PlannedBundle& b = step.bundle;
    out += fmt::format("  {{  // step {}: bundle '{}'\n", i, b.name);
    for (std::size_t p = 0; p < b.pipelines.size(); ++p)
      out += fmt::format("    //   pipeline {}: {}\n", p, pipeline_summary(b.pipelines[p]));
    out += fmt::format("    static const korch::Configuration configuration = korch::Configuration::from_json({});\n",
                       json_literal(b.configuration.to_json()));
    out += fmt::format("    korch::Bundle bundle({});\n", quoted(b.name));
    std::set<std::string> added;
    for (const auto& pipeline : b.pipelines)
      for (const auto& stage : pipeline.stages) {
        if (!added.insert(stage.routine).second) continue;
        out += fmt::format("    bundle.add(driver::routine(registry, source, {}, {}, {}));\n", quoted(stage.routine),
                           json_literal(stage_declaration(plan, stage).to_json()), name_list(stage.actions));
      }
    out += fmt::format(
        "    runtime.execute(bundle, configuration, source, pending.order(registry, source, operation, {}));\n  }}\n",
        quoted(b.name));
  }
  out += "  pending.flush(registry, source, operation);\n}\n";
  return out;
}

}  // namespace korch::plan
