// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Drawing on an Image (the timeline picture, an application's figures): pixels, filled and framed
// rectangles, lines, and text in a small built-in 5x7 bitmap font (drawn for this project).
//
// The font has upper- and lower-case letters, digits, space and the punctuation _-/.:;#=+()[],^%<>*'|;
// a space is blank and any other character is drawn as a box, so missing glyphs are visible.
// Text may be scaled up by an integer factor (each font pixel becomes scale x scale pixels).
// Everything is clipped to the image, so callers may draw partly outside it.
#pragma once

#include <korch/picture/image.hpp>

#include <cstddef>
#include <string>

namespace korch {

inline constexpr int kGlyphWidth = 5, kGlyphHeight = 7;
inline constexpr int kGlyphAdvance = 6;  // 5 px glyph + 1 px space, at scale 1

// Whether the font has a glyph for c (space counts as one).
bool has_glyph(char c);

// Width in pixels of s drawn at `scale` (the last glyph's trailing space not counted).
int text_width(const std::string& s, int scale = 1);

// An image of width x height pixels, every pixel `background`.
Image blank_image(int width, int height, const Rgb& background = Rgb{255, 255, 255});

class Canvas {
 public:
  explicit Canvas(Image& image) : image_(image) {}

  int width() const noexcept { return image_.width; }
  int height() const noexcept { return image_.height; }
  // The pixel at (x, y); white outside the image.
  Rgb get(int x, int y) const;
  void set(int x, int y, const Rgb& c);
  // Fills [x0, x1) x [y0, y1).
  void fill(int x0, int y0, int x1, int y1, const Rgb& c);
  // A 1 px outline just inside [x0, x1) x [y0, y1).
  void frame(int x0, int y0, int x1, int y1, const Rgb& c);
  // A straight line from (x0, y0) to (x1, y1), both ends included.
  void line(int x0, int y0, int x1, int y1, const Rgb& c);
  // Text with its top-left corner at (x, y), at most max_chars characters; returns the x just
  // after the last character drawn.
  int text(int x, int y, const std::string& s, const Rgb& c, int scale = 1, std::size_t max_chars = std::string::npos);

 private:
  Image& image_;
};

}  // namespace korch
