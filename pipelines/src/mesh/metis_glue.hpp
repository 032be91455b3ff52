// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one place that calls METIS, in plain types so that it builds apart from the library (only it
// needs metis.h and KORCH_HAVE_METIS; see pipelines/CMakeLists.txt).
#pragma once

namespace korch::mesh::detail {

// Whether this build has METIS.
bool metis_available() noexcept;
// METIS k-way partition of the graph (CSR: xadj[vertices + 1], adjncy) into `parts` parts, written
// to part[vertices]; returns 0 on success, else METIS's status (or -1 without METIS).
int metis_part_graph(int vertices, const int* xadj, const int* adjncy, int parts, int* part);

}  // namespace korch::mesh::detail
