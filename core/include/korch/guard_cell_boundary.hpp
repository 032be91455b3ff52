// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The boundary conditions of a uniform arrangement of blocks, per direction (docs/ranks.md):
// periodic wraps a guard cell's position around the domain, outflow clamps it to the nearest
// interior cell (zero gradient).
#pragma once

namespace korch {

enum class BoundaryKind { periodic, outflow };

}  // namespace korch
