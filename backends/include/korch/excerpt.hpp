// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Quoting what a user gave (a name, a field, a line of a file) in a korch::Error: a bounded excerpt,
// so that a message stays a few hundred bytes whatever the input.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace korch {

// How much of a user's text a message quotes.
inline constexpr std::size_t excerpt_limit = 80;

// The text itself when it is at most `limit` bytes; else its first bytes up to the limit (never
// cutting a UTF-8 character), an ellipsis and its length: "aaaa… (10485760 bytes)".
inline std::string excerpt(std::string_view text, std::size_t limit = excerpt_limit) {
  if (text.size() <= limit) return std::string(text);
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
  return fmt::format("{}\xe2\x80\xa6 ({} bytes)", text.substr(0, cut), text.size());
}

}  // namespace korch
