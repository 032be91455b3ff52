// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestMesh's flux correction at faces between levels (docs/adaptive-mesh.md, "Conservation").
#include "forest_ranks.hpp"

#include <korch/error.hpp>
#include <korch/forest_mesh.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace korch {

namespace {

// The two axes other than `axis`, ascending (the face arrays' order).
std::array<int, 2> across(int axis) {
  return axis == 0 ? std::array<int, 2>{1, 2} : axis == 1 ? std::array<int, 2>{0, 2} : std::array<int, 2>{0, 1};
}

// A face of a leaf of the forest: its index, axis and side, as one sortable number.
std::uint64_t face_id(int leaf_index, int axis, int side) {
  return static_cast<std::uint64_t>(leaf_index) * 6 + static_cast<std::uint64_t>(2 * axis + side);
}

}  // namespace

double* ForestMesh::face_flux(int block, int axis, int side) {
  neighbours_of_face(block, axis, side);  // names a bad block, axis or side
  return faces_[static_cast<std::size_t>(block * 2 * shape_.forest.dims + 2 * axis + side)].data();
}

ForestNeighbour::Kind ForestMesh::face_neighbour(int block, int axis, int side) const {
  const auto& next = neighbours_of_face(block, axis, side);
  return next.empty() ? ForestNeighbour::Kind::boundary : next.front().kind;
}

const std::vector<ForestNeighbour>& ForestMesh::neighbours_of_face(int block, int axis, int side) const {
  array(block);  // names a bad block
  if (axis < 0 || axis >= shape_.forest.dims || side < 0 || side > 1)
    throw Error(
        fmt::format("ForestMesh '{}': face of axis {} side {}; give an axis 0 .. {} and side 0 (low) or 1 "
                    "(high)",
                    name_, axis, side, shape_.forest.dims - 1));
  return face_neighbours_[static_cast<std::size_t>(block * 2 * shape_.forest.dims + 2 * axis + side)];
}

std::size_t ForestMesh::face_size(int axis) const {
  const auto [p, q] = across(axis);
  return static_cast<std::size_t>(shape_.n_vars) * static_cast<std::size_t>(shape_.cells[p]) *
         static_cast<std::size_t>(shape_.cells[q]);
}

std::vector<std::vector<double>> ForestMesh::received_faces(std::unordered_map<std::uint64_t, const double*>& faces) {
  const std::size_t ranks = static_cast<std::size_t>(comm_.size());
  const int dims = shape_.forest.dims, me = comm_.rank();
  std::vector<std::vector<double>> sends(ranks);
  std::vector<std::vector<std::uint64_t>> expected(ranks);
  if (ranks == 1) return {};
  for (int b = 0; b < static_cast<int>(own_.size()); ++b)
    for (int axis = 0; axis < dims; ++axis)
      for (int side = 0; side < 2; ++side) {
        for (const ForestNeighbour& n : neighbours_of_face(b, axis, side)) {
          if (n.kind == ForestNeighbour::Kind::boundary) continue;  // beyond a non-periodic edge: no leaf
          const int other = owners_[static_cast<std::size_t>(forest_.leaf_index(n.key))];
          if (other == me) continue;
          if (n.kind == ForestNeighbour::Kind::coarser) {
            const double* face = face_flux(b, axis, side);
            sends[static_cast<std::size_t>(other)].insert(sends[static_cast<std::size_t>(other)].end(), face,
                                                          face + face_size(axis));
          } else if (n.kind == ForestNeighbour::Kind::finer) {
            expected[static_cast<std::size_t>(other)].push_back(face_id(forest_.leaf_index(n.key), axis, 1 - side));
          }
        }
      }
  std::vector<std::size_t> sizes(ranks, 0);
  for (std::size_t r = 0; r < ranks; ++r) {
    std::sort(expected[r].begin(), expected[r].end());  // the senders' order: leaf, axis, side
    for (std::uint64_t id : expected[r]) sizes[r] += face_size(static_cast<int>(id % 6 / 2));
  }
  auto received = detail::swap_buffers(comm_, sends, sizes, 7303);
  for (std::size_t r = 0; r < ranks; ++r) {
    std::size_t offset = 0;
    for (std::uint64_t id : expected[r]) {
      faces[id] = received[r].data() + offset;
      offset += face_size(static_cast<int>(id % 6 / 2));
    }
  }
  return received;
}

void ForestMesh::correct_fluxes(double dt) {
  const int dims = shape_.forest.dims;
  const double fine_faces = static_cast<double>(1 << (dims - 1));
  std::unordered_map<std::uint64_t, const double*> remote;
  const auto buffers = received_faces(remote);
  const int first = own_.empty() ? 0 : forest_.leaf_index(own_.front());
  const auto fine_face = [&](const BlockKey& fine, int axis, int side) -> const double* {
    const int index = forest_.leaf_index(fine);
    if (owners_[static_cast<std::size_t>(index)] == comm_.rank()) return face_flux(index - first, axis, side);
    return remote.at(face_id(index, axis, side));
  };
  for (int c = 0; c < static_cast<int>(own_.size()); ++c) {
    const BlockKey& coarse = own_[static_cast<std::size_t>(c)];
    const std::array<double, 3> h = cell_size(coarse.level);
    for (int axis = 0; axis < dims; ++axis)
      for (int side = 0; side < 2; ++side) {
        const auto& next = neighbours_of_face(c, axis, side);
        if (next.empty() || next[0].kind != ForestNeighbour::Kind::finer) continue;
        const auto [p, q] = across(axis);
        const int np = shape_.cells[p], nq = shape_.cells[q];
        // The mean of the finer leaves' fluxes over each coarse face cell.
        std::vector<double> mean(static_cast<std::size_t>(shape_.n_vars * np * nq), 0.0);
        for (const ForestNeighbour& fine : next) {
          const double* flux = fine_face(fine.key, axis, 1 - side);
          for (int v = 0; v < shape_.n_vars; ++v)
            for (int fq = 0; fq < nq; ++fq)
              for (int fp = 0; fp < np; ++fp) {
                const std::int64_t cp = (fine.key.position[p] * np + fp) / 2 - coarse.position[p] * np;
                const std::int64_t cq = (fine.key.position[q] * nq + fq) / 2 - coarse.position[q] * nq;
                mean[static_cast<std::size_t>(v * np * nq + cp + np * cq)] +=
                    flux[v * np * nq + fp + np * fq] / fine_faces;
              }
        }
        const double* own = face_flux(c, axis, side);
        const BlockArray& a = arrays_[static_cast<std::size_t>(c)];
        // The update subtracted dt/h (F_high - F_low): the corrected flux enters with that sign.
        const double sign = side == 0 ? 1.0 : -1.0;
        const int edge = side == 0 ? 0 : shape_.cells[axis] - 1;
        for (int v = 0; v < shape_.n_vars; ++v)
          for (int iq = 0; iq < nq; ++iq)
            for (int ip = 0; ip < np; ++ip) {
              std::array<int, 3> cell{0, 0, 0};
              cell[axis] = edge;
              cell[p] = ip;
              cell[q] = iq;
              const std::size_t f = static_cast<std::size_t>(v * np * nq + ip + np * iq);
              a.data[v * a.stride[0] + (cell[0] + shape_.guard[0]) * a.stride[1] +
                     (cell[1] + shape_.guard[1]) * a.stride[2] + (cell[2] + shape_.guard[2]) * a.stride[3]] +=
                  sign * dt / h[axis] * (mean[f] - own[f]);
            }
      }
  }
}

}  // namespace korch
