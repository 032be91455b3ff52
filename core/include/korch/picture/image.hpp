// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An RGB picture in memory and its PNG file: what korch's timeline picture (timeline.hpp) is drawn
// on, and what an application's own pictures can use (korch-hydro's density figure does).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace korch {

// Row 0 at the top, 3 bytes (R, G, B) per pixel, rows packed: rgb.size() == 3 * width * height.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
};

using Rgb = std::array<std::uint8_t, 3>;

// Writes an 8-bit RGB PNG (libpng). Throws korch::Error naming the path (and libpng's message) on
// failure. The file is written under a temporary name first and renamed (write_file_atomically,
// output_files.hpp), so a failed or killed write leaves no partial file at `path`.
void write_png(const std::string& path, const Image& image);

}  // namespace korch
