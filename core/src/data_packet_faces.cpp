// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DataPacket's face variables: where each lies in the buffer and how it is packed and unpacked
// (docs/data-packets.md, "Face variables").
#include <korch/data_packet.hpp>
#include <korch/error.hpp>

#include <fmt/format.h>

#include "box_copy.hpp"

namespace korch {

void DataPacket::place_face_variables() {
  const int n_faces = source_->n_face_vars();
  face_section_of_.assign(static_cast<std::size_t>(n_faces), -1);
  face_slot_of_.assign(static_cast<std::size_t>(n_faces), -1);
  const std::vector<int>* lists[3] = {&vars_.face_copy_in, &vars_.face_copy_in_out, &vars_.face_copy_out};
  static const char* names[3] = {"face_copy_in", "face_copy_in_out", "face_copy_out"};
  for (int s = 0; s < 3; ++s) {
    for (const int v : *lists[s]) {
      if (v < 0 || v >= n_faces) {
        throw Error::format(
            "data packet: {} names face variable {}, but the {} has {}", names[s], v, source_->source_name(),
            n_faces == 0 ? std::string("no face variables") : fmt::format("face variables 0..{}", n_faces - 1));
      }
      auto& section = face_section_of_[static_cast<std::size_t>(v)];
      if (section != -1) {
        throw Error::format("data packet: face variable {} is in {} and in {}: give each variable one direction", v,
                            names[section], names[s]);
      }
      section = s;
      face_slot_of_[static_cast<std::size_t>(v)] = n_section_faces_[s]++;
    }
  }
}

void DataPacket::add_entry_faces(const BlockMeta& block, const Box& box) {
  std::array<std::size_t, 3> counts{0, 0, 0};
  std::size_t total = 0;
  for (int a = 0; a < 3 && has_faces(); ++a) {
    if (!has_faces_across(block, a)) continue;
    counts[static_cast<std::size_t>(a)] = face_box(box, a).cells();
    total += counts[static_cast<std::size_t>(a)];
  }
  face_counts_.push_back(counts);
  faces_per_var_.push_back(total);
}

// Cell variables entry i stores in a section: a resident packet's entries point at the blocks'
// device copies, except that a gathered entry has room for its variables in the first section.
int DataPacket::cell_vars_stored(std::size_t i, int section) const noexcept {
  if (!residency_ || section == static_cast<int>(PacketSection::scratch)) return n_section_vars_[section];
  return section == 0 && gathered_[i] ? gathered_vars_ : 0;
}

std::size_t DataPacket::entry_doubles(std::size_t i, int section) const noexcept {
  const std::size_t cells =
      static_cast<std::size_t>(cell_vars_stored(i, section)) * static_cast<std::size_t>(entries_[i].n_cells);
  if (section == static_cast<int>(PacketSection::scratch)) return cells;
  return cells + static_cast<std::size_t>(n_section_faces_[section]) * faces_per_var_[i];
}

bool DataPacket::carries_face(int var) const noexcept {
  return var >= 0 && static_cast<std::size_t>(var) < face_section_of_.size() &&
         face_section_of_[static_cast<std::size_t>(var)] >= 0;
}

std::pair<int, int> DataPacket::face_place(int var) const noexcept {
  if (!carries_face(var)) return {-1, -1};
  return {face_section_of_[static_cast<std::size_t>(var)], face_slot_of_[static_cast<std::size_t>(var)]};
}

void DataPacket::set_face_addresses(std::size_t i, double* device_buffer) {
  auto& e = entries_[i];
  for (int s = 0; s < 3; ++s) {
    const std::size_t cells = static_cast<std::size_t>(cell_vars_stored(i, s)) * static_cast<std::size_t>(e.n_cells);
    e.face_address[s] = reinterpret_cast<std::uintptr_t>(device_buffer + e.offset[s] + cells);
  }
  e.face_stride = static_cast<std::int64_t>(faces_per_var_[i]);
  std::int64_t at = 0;
  for (std::size_t a = 0; a < 3; ++a) {
    e.face_offset[a] = face_counts_[i][a] == 0 ? -1 : at;
    at += static_cast<std::int64_t>(face_counts_[i][a]);
  }
}

double* DataPacket::face_pointer(double* base, std::size_t i, int axis, int var) const {
  if (!carries_face(var)) {
    throw Error::format(
        "{}: face variable {} is not in this packet: list it in face_copy_in, face_copy_in_out or face_copy_out",
        describe(), var);
  }
  const auto& e = entries_.at(i);
  if (axis < 0 || axis > 2 || face_counts_[i][static_cast<std::size_t>(axis)] == 0) {
    throw Error::format("{}: entry {} (block {}) has no faces across axis {}: its block has faces across {}",
                        describe(), i, e.block, axis,
                        fmt::format("{}{}{}", face_counts_[i][0] ? "x " : "", face_counts_[i][1] ? "y " : "",
                                    face_counts_[i][2] ? "z" : ""));
  }
  const int section = face_section_of_[static_cast<std::size_t>(var)];
  std::size_t at = e.offset[section] +
                   static_cast<std::size_t>(cell_vars_stored(i, section)) * static_cast<std::size_t>(e.n_cells) +
                   static_cast<std::size_t>(face_slot_of_[static_cast<std::size_t>(var)]) * faces_per_var_[i];
  for (int a = 0; a < axis; ++a) at += face_counts_[i][static_cast<std::size_t>(a)];
  return base + at;
}

// Face copy-in and copy-in-out variables into the pinned buffer (to_packet), or copy-in-out and
// copy-out ones back into the source's face arrays.
void DataPacket::copy_faces(bool to_packet) {
  if (!has_faces()) return;
  auto* base = static_cast<double*>(host_.data());
  const std::vector<int>* lists[3] = {&vars_.face_copy_in, &vars_.face_copy_in_out, &vars_.face_copy_out};
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const Box box = detail::entry_box(entries_[i]);
    for (int a = 0; a < 3; ++a) {
      if (face_counts_[i][static_cast<std::size_t>(a)] == 0) continue;
      const BlockView faces = source_->face_view(entries_[i].block, a);
      for (int s = to_packet ? 0 : 1; s < (to_packet ? 2 : 3); ++s)
        for (const int v : *lists[s]) {
          double* const packed = face_pointer(base, i, a, v);
          if (to_packet)
            detail::copy_box<true>(faces, face_box(box, a), {v}, packed);
          else
            detail::copy_box<false>(faces, face_box(box, a), {v}, packed);
        }
    }
  }
}

DataPacket::DeviceVar DataPacket::device_face(std::size_t i, int axis, int var) const {
  require(State::on_device, "device_face()");
  const Box faces = face_box(detail::entry_box(entries_.at(i)), axis < 0 || axis > 2 ? 0 : axis);
  double* const first = face_pointer(static_cast<double*>(device_.data()), i, axis, var);
  return DeviceVar(first, static_cast<std::size_t>(faces.extent(0)), static_cast<std::size_t>(faces.extent(1)),
                   static_cast<std::size_t>(faces.extent(2)));
}

DataPacket::HostVar DataPacket::host_face(std::size_t i, int axis, int var) const {
  if (state_ != State::packed && state_ != State::on_host) require(State::on_host, "host_face()");
  const Box faces = face_box(detail::entry_box(entries_.at(i)), axis < 0 || axis > 2 ? 0 : axis);
  double* const first = face_pointer(static_cast<double*>(host_.data()), i, axis, var);
  return HostVar(first, static_cast<std::size_t>(faces.extent(0)), static_cast<std::size_t>(faces.extent(1)),
                 static_cast<std::size_t>(faces.extent(2)));
}

}  // namespace korch
