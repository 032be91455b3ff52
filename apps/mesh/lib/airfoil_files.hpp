// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The airfoil benchmark's files (the format of shared/data/airfoil-162): mesh, constants and cell
// states, read and written. Needs no Kokkos, so that the readers can be fuzzed on their own
// (docs/fuzzing.md).
#pragma once

#include <array>
#include <string>
#include <vector>

namespace korch::mesh::airfoil {

struct Constants {
  double gam = 0, gm1 = 0, cfl = 0, eps = 0, mach = 0, alpha = 0;
  std::array<double, 4> qinf{};
};

// The mesh file: "nnode ncell nedge nbedge", then node coordinates, cell nodes (4), edges
// (n1 n2 c1 c2), boundary edges (n1 n2 c bound). Indices 0-based.
struct MeshData {
  int nnode = 0, ncell = 0, nedge = 0, nbedge = 0;
  std::vector<double> x;    // 2 per node
  std::vector<int> cell;    // 4 per cell
  std::vector<int> edge;    // 2 per edge (nodes)
  std::vector<int> ecell;   // 2 per edge (cells)
  std::vector<int> bedge;   // 2 per boundary edge (nodes)
  std::vector<int> becell;  // 1 per boundary edge
  std::vector<int> bound;   // 1 per boundary edge: 1 wall, 2 far field
};

// The state after one step: per cell q[4], qold[4], res[4], adt.
struct CellState {
  std::vector<double> q, qold, res, adt;
};

// Readers throw korch::Error naming the file, the line and the field.
MeshData read_mesh(const std::string& path);
Constants read_constants(const std::string& path);
CellState read_state(const std::string& path, int ncell);
void write_mesh(const MeshData& mesh, const std::string& path);
void write_constants(const Constants& constants, const std::string& path);
// The reference program's constants: its single-precision literals widened to double, free stream
// at Mach 0.4 with unit density and pressure (what korch-mesh-gen writes next to a generated mesh).
Constants reference_constants();

}  // namespace korch::mesh::airfoil
