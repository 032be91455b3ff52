// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// METIS k-way graph partition (balanced parts, few cut edges, hence small halos).
#include "metis_glue.hpp"

#ifdef KORCH_HAVE_METIS
#include <metis.h>

#include <vector>
#endif

namespace korch::mesh::detail {

bool metis_available() noexcept {
#ifdef KORCH_HAVE_METIS
  return true;
#else
  return false;
#endif
}

int metis_part_graph(int vertices, const int* xadj, const int* adjncy, int parts, int* part) {
#ifdef KORCH_HAVE_METIS
  idx_t n = vertices, constraints = 1, nparts = parts, cut = 0;
  std::vector<idx_t> x(xadj, xadj + vertices + 1), adj(adjncy, adjncy + xadj[vertices]),
      out(static_cast<std::size_t>(vertices));
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same partition on every run
  const int rc = METIS_PartGraphKway(&n, &constraints, x.data(), adj.data(), nullptr, nullptr, nullptr, &nparts,
                                     nullptr, nullptr, options, &cut, out.data());
  if (rc != METIS_OK) return rc;
  for (int v = 0; v < vertices; ++v) part[v] = static_cast<int>(out[static_cast<std::size_t>(v)]);
  return 0;
#else
  (void)vertices;
  (void)xadj;
  (void)adjncy;
  (void)parts;
  (void)part;
  return -1;
#endif
}

}  // namespace korch::mesh::detail
