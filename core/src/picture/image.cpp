// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/output_files.hpp>
#include <korch/picture/image.hpp>

#include <png.h>

#include <cerrno>
#include <cstring>

namespace korch {

void write_png(const std::string& path, const Image& image) {
  if (image.width < 1 || image.height < 1 ||
      image.rgb.size() != 3 * static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height))
    throw Error::format(
        "write_png '{}': the image is {} x {} with {} bytes: need a non-empty image of 3 * width * "
        "height bytes",
        path, image.width, image.height, image.rgb.size());
  write_file_atomically(path, [&](const std::string& temporary) {
    png_image png;
    std::memset(&png, 0, sizeof png);
    png.version = PNG_IMAGE_VERSION;
    png.width = static_cast<png_uint_32>(image.width);
    png.height = static_cast<png_uint_32>(image.height);
    png.format = PNG_FORMAT_RGB;
    errno = 0;
    const int ok = png_image_write_to_file(&png, temporary.c_str(), 0, image.rgb.data(), 3 * image.width, nullptr);
    if (!ok) {
      std::string message = png.message;
      if (message.empty() && errno != 0) message = std::strerror(errno);
      png_image_free(&png);
      throw Error::format("write_png: cannot write '{}': {}", path, message);
    }
    png_image_free(&png);
  });
}

}  // namespace korch
