// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reading JSON that a person wrote (design: docs/input-formats.md). nlohmann's plain parse accepts
// any nesting (and its dump() then recurses as deep), lets the last of two equal keys win, and
// reports a number beyond double's range without saying where it was; its dump() quotes a value
// whole, however large. parse() and excerpt() close those gaps for every JSON reader of korch.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace korch::json_input {

// Deeper than any configuration needs, and far from where recursion over the value could hurt.
inline constexpr std::size_t max_depth = 64;

// Parses `text`. Throws korch::Error starting with "`what`: " and naming the field (e.g.
// "configuration: field teams[0].threads: given twice") when the text is not JSON, nests arrays
// and objects deeper than max_depth, gives a key twice in one object, or holds a number outside
// double's range. The parse stops at the first of these.
nlohmann::json parse(const std::string& text, const std::string& what);

// The value's JSON text, cut after about `max_chars` characters: "[1, 2, 3, ... (an array of
// 1000000 elements)". Never builds the whole text of a large value.
std::string excerpt(const nlohmann::json& value, std::size_t max_chars = 60);

// `text` cut after about `max_chars` characters (at a character boundary): "abc... (5000000 bytes)".
std::string shorten(const std::string& text, std::size_t max_chars = 60);

}  // namespace korch::json_input
