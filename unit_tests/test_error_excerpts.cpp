// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Messages quote what a user gave as a bounded excerpt (korch/excerpt.hpp): with a 10 MB name of a
// team, configuration, bundle, action or block list, each message stays a few hundred bytes.
#include "test_error_support.hpp"
#include "test_runtime_support.hpp"

#include <korch/block_list.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/excerpt.hpp>
#include <korch/runtime.hpp>

#include <string>

using namespace korch;
using namespace korch::test;

namespace {
const std::string huge(10 * 1024 * 1024, 'x');
}

TEST_CASE("excerpt: short text unchanged; long text cut at 80 bytes, never inside a UTF-8 character, with its length") {
  CHECK(excerpt("team 1") == "team 1");
  CHECK(excerpt(std::string(80, 'a')) == std::string(80, 'a'));
  CHECK(excerpt(std::string(81, 'a')) == std::string(80, 'a') + "\xe2\x80\xa6 (81 bytes)");
  // 79 ASCII bytes then a 2-byte character across the limit: it is left out whole.
  const std::string text = std::string(79, 'a') + "\xc3\xa9" + "bc";
  CHECK(excerpt(text) == std::string(79, 'a') + "\xe2\x80\xa6 (83 bytes)");
  CHECK(excerpt(huge).size() <= 100);
}

TEST_CASE("Messages with a 10 MB name of a team, configuration, bundle or block list stay under a few hundred bytes") {
  const std::string no_threads = error_of([] { ThreadTeam team(huge, 0); });
  CHECK(contains(no_threads, "(10485760 bytes)"));
  CHECK(no_threads.size() < 300);

  Configuration c = configurations::get("cpu_only");
  c.name = huge;
  c.teams[0].name = huge;
  Runtime rt(RuntimeOptions{2, 2, 1, 1, {}, 0, 0});
  Bundle bundle(huge);
  bundle.add(ActionRoutine("A", [](const ActionContext&, DataItem&) {}));
  GridSpec spec;
  spec.block_cells = {4, 4, 1};
  spec.blocks = {1, 1, 1};
  Grid grid(spec);
  const std::string unknown_node = error_of([&] { rt.execute(bundle, c, grid); });
  CHECK(contains(unknown_node, "(10485760 bytes)"));
  CHECK(unknown_node.size() < 400);

  const std::string twice = error_of([&] { bundle.add(ActionRoutine("A", [](const ActionContext&, DataItem&) {})); });
  CHECK(contains(twice, "already has a routine 'A'"));
  CHECK(twice.size() < 300);

  Bundle other("other");  // A, and a routine no team applies
  other.add(ActionRoutine("A", [](const ActionContext&, DataItem&) {}));
  other.add(ActionRoutine(huge, [](const ActionContext&, DataItem&) {}));
  const std::string missing = error_of([&] { rt.execute(other, configurations::get("cpu_only"), grid); });
  CAPTURE(missing);
  CHECK(contains(missing, "is applied by no team"));
  CHECK(contains(missing, "(10485760 bytes)"));
  CHECK(missing.size() < 400);

  const std::string no_vars = error_of([] { BlockList list(huge, 0); });
  CHECK(contains(no_vars, "(10485760 bytes)"));
  CHECK(no_vars.size() < 300);
}
