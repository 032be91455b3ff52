// Fuzz target: a plan file (pipelines/include/korch/plan/plan.hpp), as Plan::from_json reads one
// that korch-plan wrote or a person edited. Rules checked: a bad file throws only korch::Error,
// whose message starts with "plan" (the errors name the step and field); an accepted plan reads
// back from its own to_json() unchanged.
#include "fuzz_support.hpp"

#include <korch/error.hpp>
#include <korch/plan/plan.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

using korch::fuzz::broken;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  korch::plan::Plan plan;
  try {
    plan = korch::plan::Plan::from_json(text);
  } catch (const korch::Error& e) {
    if (std::string(e.what()).rfind("plan", 0) != 0) broken("an error starts with \"plan\"", e.what());
    return 0;
  } catch (const std::exception& e) {
    broken("only korch::Error escapes from Plan::from_json", e.what());
  }
  const std::string json = plan.to_json();
  std::string again;
  try {
    again = korch::plan::Plan::from_json(json).to_json();
  } catch (const korch::Error& e) {
    broken("a plan reads back from its own to_json()", std::string(e.what()) + "\n" + json);
  }
  if (again != json) broken("a plan reads back unchanged", json + "\n---\n" + again);
  for (const korch::plan::PlannedBundle* bundle : plan.bundles()) (void)korch::plan::configuration_dot(bundle->configuration);
  return 0;
}
