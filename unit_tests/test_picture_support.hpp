// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the suites that check pictures (the timeline, korch-hydro's figures): a trace event of
// given times, a PNG read back with libpng, and one pixel of an image.
#pragma once

#include <doctest/doctest.h>

#include <korch/picture/image.hpp>
#include <korch/trace.hpp>

#include <png.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace korch::test {

inline TraceEvent event(const std::string& name, const std::string& category, const std::string& team, unsigned thread,
                        std::int64_t begin, std::int64_t end) {
  TraceEvent e;
  e.name = name;
  e.category = category;
  e.team = team;
  e.thread = thread;
  e.item = "block 0";
  e.begin_ns = begin;
  e.end_ns = end;
  return e;
}

inline Image read_png_rgb(const std::string& path) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  REQUIRE(png_image_begin_read_from_file(&png, path.c_str()) != 0);
  png.format = PNG_FORMAT_RGB;
  Image image;
  image.width = static_cast<int>(png.width);
  image.height = static_cast<int>(png.height);
  image.rgb.resize(PNG_IMAGE_SIZE(png));
  REQUIRE(png_image_finish_read(&png, nullptr, image.rgb.data(), 0, nullptr) != 0);
  png_image_free(&png);
  return image;
}

inline Rgb pixel(const Image& image, int x, int y) {
  const std::size_t at =
      3 * (static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) + static_cast<std::size_t>(x));
  return {image.rgb[at], image.rgb[at + 1], image.rgb[at + 2]};
}

}  // namespace korch::test
