// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The primary set's graph partition with METIS, where korch was built with it (metis_glue.cpp).
#include <korch/error.hpp>
#include <korch/mesh/partition.hpp>
#include "metis_glue.hpp"

namespace korch::mesh {

bool Partition::have_metis() noexcept { return detail::metis_available(); }

namespace detail {

std::vector<int> metis_partition(const std::vector<int>& xadj, const std::vector<int>& adjncy, int parts) {
  const int vertices = static_cast<int>(xadj.size()) - 1;
  if (vertices <= 0) return {};
  if (!metis_available())
    throw Error("mesh::Partition: this korch was built without METIS: install libmetis-dev and reconfigure");
  std::vector<int> part(static_cast<std::size_t>(vertices), 0);
  const int rc = metis_part_graph(vertices, xadj.data(), adjncy.data(), parts, part.data());
  if (rc != 0)
    throw Error::format(
        "mesh::Partition: METIS_PartGraphKway failed (status {}) on {} elements into {} parts: use "
        "PartitionMethod::Block",
        rc, vertices, parts);
  return part;
}

}  // namespace detail
}  // namespace korch::mesh
