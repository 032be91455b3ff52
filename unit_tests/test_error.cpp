#include <korch/error.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

TEST_CASE("korch::Error formats its message and is a std::runtime_error") {
  const auto e = korch::Error::format("team '{}' is {}: {}", "cpu", "RunningOpen", "call wait() first");
  CHECK(std::string(e.what()) == "team 'cpu' is RunningOpen: call wait() first");
  CHECK_THROWS_AS(throw e, std::runtime_error);
  CHECK_THROWS_WITH_AS(throw korch::Error("plain"), "plain", korch::Error);
}
