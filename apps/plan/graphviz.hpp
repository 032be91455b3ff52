// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Drawing DOT files as PNG with Graphviz's `dot` (Debian package graphviz), when it is installed.
#pragma once

#include <string>

namespace korch::plan_app {

// The path of `dot` on PATH, or "" when it is not there.
std::string find_dot();

// Runs `dot -Tpng DOT_FILE -o PNG_FILE`; throws korch::Error naming the file when dot fails.
void render_png(const std::string& dot, const std::string& dot_file, const std::string& png_file);

}  // namespace korch::plan_app
