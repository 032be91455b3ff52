// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Node types shared by the dataflow demos, their tests and their benchmark: a device-callable
// integer hash for reproducible inputs, and the record parser's items and nodes
// (records -> comma-separated fields -> characters).
#pragma once

#include <korch/dataflow.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace korch::dataflow::demo {

// A 32-bit integer hash (xorshift-multiply) usable inside kernels.
KOKKOS_INLINE_FUNCTION std::uint32_t mix(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

struct Record {  // a line of text: [off, off + len)
  int id, off, len;
};
struct Field {  // field idx of record rec: [off, off + len)
  int rec, idx, off, len;
};
struct Char {  // one character of a field
  int rec, field, c;
};

// Enumerates a record's comma-separated fields (a record without commas is one field).
struct Fields {
  using parent_type = Record;
  using element_type = Field;
  Kokkos::View<const char*> text;
  KOKKOS_INLINE_FUNCTION int count(const Record& r) const {
    int n = 1;
    for (int i = 0; i < r.len; ++i) n += text(r.off + i) == ',';
    return n;
  }
  KOKKOS_INLINE_FUNCTION Field element(const Record& r, int k) const {
    int start = r.off, f = 0;
    for (int i = 0; i < r.len && f < k; ++i)
      if (text(r.off + i) == ',') {
        ++f;
        start = r.off + i + 1;
      }
    int end = start;
    while (end < r.off + r.len && text(end) != ',') ++end;
    return Field{r.id, k, start, end - start};
  }
};

// Drops empty fields.
struct NonEmpty {
  using input_type = Field;
  using outputs = Outputs<Out<Field, 1>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const Field& f, Emit& emit) const {
    if (f.len > 0) emit(f);
  }
};

// Enumerates a field's characters.
struct Chars {
  using parent_type = Field;
  using element_type = Char;
  Kokkos::View<const char*> text;
  KOKKOS_INLINE_FUNCTION int count(const Field& f) const { return f.len; }
  KOKKOS_INLINE_FUNCTION Char element(const Field& f, int i) const { return Char{f.rec, f.idx, text(f.off + i)}; }
};

// Keeps decimal digits.
struct Digits {
  using input_type = Char;
  using outputs = Outputs<Out<Char, 1>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const Char& c, Emit& emit) const {
    if (c.c >= '0' && c.c <= '9') emit(c);
  }
};

// Host helpers for record corpora: copy the text and the records to the default memory space, and
// split a record's text at commas (the sequential reference of the Fields enumerator).
inline Kokkos::View<char*> upload_text(const std::string& text) {
  Kokkos::View<char*> d("text", text.size() + 1);
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < text.size(); ++i) h(i) = text[i];
  Kokkos::deep_copy(d, h);
  return d;
}
inline Kokkos::View<Record*> upload_records(const std::vector<Record>& records) {
  Kokkos::View<Record*> d("records", records.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < records.size(); ++i) h(i) = records[i];
  Kokkos::deep_copy(d, h);
  return d;
}
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out(1);
  for (char ch : s) {
    if (ch == ',')
      out.emplace_back();
    else
      out.back() += ch;
  }
  return out;
}

}  // namespace korch::dataflow::demo
