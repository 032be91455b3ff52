// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "c_item.hpp"

#include <korch/block.hpp>
#include <korch/data_packet.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>
#include <korch/tile.hpp>

namespace korch::c_api {

namespace {
thread_local std::string routine_message;
thread_local const std::string* running_action = nullptr;

// Marks the calling thread as inside the routine of `action` while it lives.
struct InsideRoutine {
  explicit InsideRoutine(const std::string& action) : outer(running_action) { running_action = &action; }
  ~InsideRoutine() { running_action = outer; }
  InsideRoutine(const InsideRoutine&) = delete;
  InsideRoutine& operator=(const InsideRoutine&) = delete;
  const std::string* outer;
};

}  // namespace

// The item as the C API describes it: lo and hi inclusive, in the numbering where the block's
// interior is 1..n (block-local index - guard + 1).
korch_item describe(const DataSource& source, int block, int tile, const Box& box, const BlockView& view,
                    const BlockView* faces) {
  const auto& m = source.block(block);
  korch_item c{};
  for (int r = 0; r < 4; ++r) c.stride[r] = static_cast<int64_t>(view.stride(r));
  for (int d = 0; d < 3; ++d) {
    c.delta[d] = m.delta[d];
    c.lo_coord[d] = m.lo_coord[d];
    c.cells[d] = m.interior.extent(d);
    c.guard[d] = m.interior.lo[d] - m.stored.lo[d];
    c.lo[d] = box.lo[d] - c.guard[d] + 1;
    c.hi[d] = box.hi[d] - c.guard[d];
  }
  c.block = block;
  c.tile = tile;
  c.level = m.level;
  c.n_vars = source.n_vars();
  c.n_face_vars = source.n_face_vars();
  for (int a = 0; a < 3 && c.n_face_vars > 0; ++a) {
    if (!has_faces_across(m, a)) continue;
    const BlockView f = faces != nullptr ? faces[a] : source.face_view(block, a);
    c.face_data[a] = f.data();
    for (int r = 0; r < 4; ++r) c.face_stride[a][r] = static_cast<int64_t>(f.stride(r));
  }
  return c;
}

void set_routine_message(const char* message) { routine_message = message ? message : ""; }

const std::string* routine_running() noexcept { return running_action; }

void refuse_inside_routine(const char* fix) {
  if (running_action)
    throw Error::format("called from action routine '{}' while its cycle runs: {}", excerpt(*running_action), fix);
}

int call_user_routine(const std::string& name, const std::function<int()>& call, std::string& message) {
  routine_message.clear();
  int status = 0;
  {
    const InsideRoutine inside(name);
    status = call();
  }
  message = excerpt(routine_message, 4 * excerpt_limit);
  return status;
}

void call_routine(const std::string& name, korch_action_fn function, void* user, const korch_item& item, double* data,
                  const std::string& what) {
  std::string message;
  const int status = call_user_routine(
      name, [&] { return function(&item, data, user); }, message);
  if (status != 0)
    throw Error::format("action '{}' returned status {} on {}{}{}", excerpt(name), status, what,
                        message.empty() ? "" : ": ", message);
}

ActionRoutine routine(const std::string& name, korch_action_fn function, void* user) {
  return ActionRoutine(name, [name, function, user](const ActionContext& ctx, DataItem& item) {
    korch_item c{};
    BlockView view;
    if (auto* t = dynamic_cast<Tile*>(&item)) {
      view = t->view();
      c = describe(t->source(), t->block_id(), t->tile_index(), t->box(), view);
    } else if (auto* b = dynamic_cast<Block*>(&item)) {
      view = b->view();
      c = describe(b->source(), b->block_id(), -1, b->interior(), view);
    } else if (auto* p = dynamic_cast<DataPacket*>(&item)) {
      run_on_packet(name, function, user, ctx, *p);
      return;
    } else {
      throw Error::format(
          "action '{}' is a C or Fortran routine, which runs on tiles, blocks and packets of them, but it was "
          "given {}: choose a configuration whose team for '{}' takes those (e.g. cpu_only or gpu_only)",
          excerpt(name), item.describe(), excerpt(name));
    }
    call_routine(name, function, user, c, view.data(), item.describe());
  });
}

}  // namespace korch::c_api
