// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "json_input.hpp"

#include <korch/error.hpp>

#include <set>
#include <vector>

namespace korch::json_input {

using nlohmann::json;

namespace {

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Cuts `text` to at most `n` bytes without splitting a UTF-8 sequence.
std::string utf8_prefix(const std::string& text, std::size_t n) {
  if (text.size() <= n) return text;
  while (n > 0 && continuation_byte(text[n])) --n;
  return text.substr(0, n);
}

// A path of deeply nested values keeps its start and its end: "a[0][0][0]...[0][0].b".
std::string middle_cut(const std::string& path) {
  constexpr std::size_t head = 80, tail = 60;
  if (path.size() <= head + tail + 3) return path;
  std::size_t from = path.size() - tail;
  while (from < path.size() && continuation_byte(path[from])) ++from;
  return utf8_prefix(path, head) + "..." + path.substr(from);
}

// Follows nlohmann's parse events to know the path of the value being read, which keys each open
// object has had, and how deep the parse is.
class PathTracker {
 public:
  explicit PathTracker(const std::string& what) : what_(what) {}

  bool on_event(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (frames_.size() >= max_depth) {
          fail(path(), "arrays and objects nested deeper than " + std::to_string(max_depth) +
                           " levels: a configuration needs a handful");
        }
        frames_.push_back(Frame{event == json::parse_event_t::array_start, 0, {}, {}});
        break;
      case json::parse_event_t::key: {
        Frame& top = frames_.back();
        top.key = parsed.get_ref<const std::string&>();
        if (!top.keys.insert(top.key).second) fail(path(), "given twice in one object: keep one");
        break;
      }
      case json::parse_event_t::value: finish_element(); break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.pop_back();
        finish_element();
        break;
    }
    return true;
  }

  // The field whose value is being read: "teams[0].threads", or "(top level)".
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.array) {
        p += "[" + std::to_string(f.index) + "]";
      } else if (!f.key.empty() || !f.keys.empty()) {
        p += (p.empty() ? "" : ".") + shorten(f.key);
      }
    }
    return p.empty() ? "(top level)" : middle_cut(p);
  }

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw Error::format("{}: field {}: {}", what_, field, what);
  }

 private:
  struct Frame {
    bool array;
    std::size_t index;           // arrays: the element being read
    std::string key;             // objects: the key being read
    std::set<std::string> keys;  // objects: the keys seen so far
  };
  void finish_element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  const std::string& what_;
  std::vector<Frame> frames_;
};

std::string dump_scalar(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

// Appends v's text to `out` until `out` holds more than `limit` characters.
void append(std::string& out, const json& v, std::size_t limit) {
  if (out.size() > limit) return;
  if (v.is_string()) {
    out += dump_scalar(json(utf8_prefix(v.get_ref<const std::string&>(), limit - out.size() + 1)));
  } else if (v.is_array()) {
    out += "[";
    bool first = true;
    for (const json& e : v) {
      if (out.size() > limit) return;
      out += first ? "" : ", ";
      first = false;
      append(out, e, limit);
    }
    out += "]";
  } else if (v.is_object()) {
    out += "{";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (out.size() > limit) return;
      out += first ? "" : ", ";
      first = false;
      out += dump_scalar(json(utf8_prefix(it.key(), limit))) + ": ";
      append(out, it.value(), limit);
    }
    out += "}";
  } else {
    out += dump_scalar(v);
  }
}

std::string size_note(const json& v) {
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " elements";
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " fields";
  if (v.is_string()) return "a string of " + std::to_string(v.get_ref<const std::string&>().size()) + " bytes";
  return "a " + std::string(v.type_name());
}

}  // namespace

json parse(const std::string& text, const std::string& what) {
  PathTracker tracker(what);
  try {
    return json::parse(
        text, [&tracker](int, json::parse_event_t event, json& parsed) { return tracker.on_event(event, parsed); });
  } catch (const json::parse_error& e) {
    throw Error::format("{}: not valid JSON ({}), in field {}: fix the text at byte {}", what, shorten(e.what(), 200),
                        tracker.path(), e.byte);
  } catch (const json::out_of_range& e) {  // a number beyond double's range (nlohmann's error 406)
    tracker.fail(tracker.path(), "a number outside double's range (" + shorten(e.what(), 200) + ")");
  }
}

std::string shorten(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return utf8_prefix(text, max_chars) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string excerpt(const json& value, std::size_t max_chars) {
  std::string out;
  append(out, value, max_chars);
  if (out.size() <= max_chars) return out;
  return utf8_prefix(out, max_chars) + "... (" + size_note(value) + ")";
}

}  // namespace korch::json_input
