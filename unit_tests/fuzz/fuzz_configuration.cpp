// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: Configuration::from_json on any text. Rules checked: the only exception is
// korch::Error, its message stays short whatever the input's size, and an accepted configuration
// reads back from its own to_json() unchanged.
#include <korch/configuration.hpp>
#include <korch/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void broken(const char* rule, const std::string& detail) {
  std::fprintf(stderr, "rule broken: %s\n%.2000s\n", rule, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  korch::Configuration configuration;
  try {
    configuration = korch::Configuration::from_json(text);
  } catch (const korch::Error& e) {
    if (std::string(e.what()).size() > 1000) broken("an error message is at most 1000 characters", e.what());
    return 0;
  }
  const std::string json = configuration.to_json();
  try {
    if (korch::Configuration::from_json(json).to_json() != json) broken("to_json() reads back unchanged", json);
  } catch (const korch::Error& e) {
    broken("to_json() of an accepted configuration is accepted", std::string(e.what()) + "\n" + json);
  }
  return 0;
}
