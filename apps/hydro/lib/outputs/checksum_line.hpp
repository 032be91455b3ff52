// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Text files that end with a line holding the FNV-1a checksum of the bytes before it (plot series
// records, plots' own XDMF files): the line for some text, and the text before a matching last line.
#pragma once

#include "fnv1a64.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>

namespace korch::hydro {

// `prefix` and `suffix` around "fnv1a64 " and the checksum of `text` in 16 hexadecimal digits, and
// a newline: "checksum fnv1a64 0123456789abcdef\n", or an XML comment.
inline std::string checksum_line(const std::string& text, const char* prefix, const char* suffix) {
  Fnv1a64 sum;
  sum.add(text.data(), text.size());
  return fmt::format("{}fnv1a64 {:016x}{}\n", prefix, sum.value(), suffix);
}

// The bytes of `file_text` before its last line when that line is checksum_line(those bytes, prefix,
// suffix); nothing when the last line is missing, cut or does not match.
inline std::optional<std::string> text_before_checksum(const std::string& file_text, const char* prefix,
                                                       const char* suffix) {
  if (file_text.empty() || file_text.back() != '\n') return std::nullopt;
  const std::size_t last = file_text.size() > 1 ? file_text.rfind('\n', file_text.size() - 2) : std::string::npos;
  const std::size_t start = last == std::string::npos ? 0 : last + 1;
  std::string before = file_text.substr(0, start);
  if (file_text.compare(start, std::string::npos, checksum_line(before, prefix, suffix)) != 0) return std::nullopt;
  return before;
}

}  // namespace korch::hydro
