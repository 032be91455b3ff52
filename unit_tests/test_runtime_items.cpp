// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Grid substrate, data items, memory pools, data packets, splitters and aggregators (the
// distributors and the item cache: test_runtime_distribution.cpp).
#include "test_error_support.hpp"
#include "test_runtime_support.hpp"

#include <korch/aggregator.hpp>
#include <korch/backend/memory_pool.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/data_mover.hpp>
#include <korch/splitter.hpp>
#include <korch/unpacker.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace korch;
using namespace korch::test;

TEST_CASE("Grid: tiles partition every block's interior exactly once") {
  for (auto tile : {std::array<int, 3>{4, 4, 4}, std::array<int, 3>{3, 5, 0}, std::array<int, 3>{0, 0, 0}}) {
    Grid g(small_tiled_spec(tile));
    std::vector<int> hits(static_cast<std::size_t>(10 * 10 * 6), 0);
    for (const auto& b : g.tile_boxes())
      for (int i = b.lo[0]; i < b.hi[0]; ++i)
        for (int j = b.lo[1]; j < b.hi[1]; ++j)
          for (int k = b.lo[2]; k < b.hi[2]; ++k) ++hits[static_cast<std::size_t>((i * 10 + j) * 6 + k)];
    const auto& in = g.block(0).interior;
    for (int i = 0; i < 10; ++i)
      for (int j = 0; j < 10; ++j)
        for (int k = 0; k < 6; ++k) {
          const bool interior =
              i >= in.lo[0] && i < in.hi[0] && j >= in.lo[1] && j < in.hi[1] && k >= in.lo[2] && k < in.hi[2];
          CHECK(hits[static_cast<std::size_t>((i * 10 + j) * 6 + k)] == (interior ? 1 : 0));
        }
  }
  Grid whole(small_tiled_spec({0, 0, 0}));
  CHECK(whole.tiles_per_block() == 1);
  CHECK(whole.tile_box(0) == whole.block(0).interior);
}

TEST_CASE("Grid: metadata carries the level, deltas and contiguous block storage; bad specs name the field") {
  Grid g(small_tiled_spec());
  CHECK(g.n_blocks() == 4);
  CHECK(g.block(3).level == 2);
  CHECK(g.block(1).delta[0] == doctest::Approx(1.0 / 16));
  CHECK(g.block_pointer(1) - g.block_pointer(0) == static_cast<std::ptrdiff_t>(g.doubles_per_block()));
  CHECK(all_tiles(g).size() == 16);
  CHECK(all_blocks(g).size() == 4);
  CHECK(Block(g, 2).tiles().size() == 4);
  auto bad = small_tiled_spec();
  bad.n_vars = 0;
  CHECK_THROWS_WITH_AS(Grid{bad}, doctest::Contains("n_vars"), Error);
  CHECK_THROWS_WITH_AS(g.block(9), doctest::Contains("block 9 does not exist"), Error);
  CHECK_THROWS_AS(Tile(g, 0, 99), Error);
}

TEST_CASE("Grid: guard_dims leaves the directions after the first guard_dims without guard cells") {
  GridSpec s = small_tiled_spec({4, 4, 0});
  s.block_cells = {8, 8, 1};
  s.guard = 2;
  s.guard_dims = 2;
  Grid g(s);
  CHECK(g.guard_width() == std::array<int, 3>{2, 2, 0});
  CHECK(g.stored_extent() == std::array<int, 3>{12, 12, 1});
  CHECK(g.doubles_per_block() == static_cast<std::size_t>(3 * 12 * 12));
  CHECK(g.block(0).interior.lo == std::array<int, 3>{2, 2, 0});
  CHECK(g.block(0).interior.hi == std::array<int, 3>{10, 10, 1});
  for (const auto& b : g.tile_boxes()) {
    CHECK(b.lo[2] == 0);
    CHECK(b.hi[2] == 1);
  }
  std::size_t cells = 0;
  for (const auto& b : g.tile_boxes()) cells += b.cells();
  CHECK(cells == 64);
  s.guard_dims = 3;
  CHECK(Grid(s).stored_extent() == std::array<int, 3>{12, 12, 5});
  s.guard_dims = 0;
  CHECK_THROWS_WITH_AS(Grid{s}, doctest::Contains("guard_dims is 0"), Error);
  s.guard_dims = 4;
  CHECK_THROWS_WITH_AS(Grid{s}, doctest::Contains("guard_dims is 4"), Error);
}

TEST_CASE("Pool: a limit frees cached blocks first, then refuses with an error naming the pool and the fix") {
  MemoryPool pool("limited", PoolMemory::device, 3 * 4096);
  CHECK(pool.limit_bytes() == 3 * 4096);
  {
    PoolBuffer a = pool.acquire(4096);
    PoolBuffer b = pool.acquire(100);
    PoolBuffer c = pool.acquire(4000);
    CHECK(pool.stats().allocated_bytes == 3 * 4096);
    const std::string msg = error_of([&] { (void)pool.acquire(1); });
    CHECK(contains(msg, "memory pool 'limited' (device)"));
    CHECK(contains(msg, "limit of 12288 bytes"));
    CHECK(contains(msg, "12288 bytes are in use"));
    CHECK(contains(msg, "device_pool_limit"));
    CHECK(pool.outstanding_bytes() == 4096 + 100 + 4000);  // the refusal changed nothing
  }
  // Three cached 4 KiB blocks; an 8 KiB block fits only after two of them are freed.
  CHECK(pool.stats().allocated_bytes == 3 * 4096);
  {
    PoolBuffer big = pool.acquire(8192);
    CHECK(pool.stats().allocated_bytes == 3 * 4096);
    PoolBuffer small = pool.acquire(10);  // the one cached block left
    CHECK(pool.stats().allocated_bytes == 3 * 4096);
    CHECK_THROWS_WITH_AS((void)pool.acquire(5 * 4096), doctest::Contains("would pass the pool's limit"), Error);
  }
  CHECK(pool.outstanding_bytes() == 0);
  pool.set_limit_bytes(4096);  // lowering the limit returns cached blocks down to it
  CHECK(pool.stats().allocated_bytes <= 4096);
  const std::size_t cached = pool.stats().allocated_bytes;
  CHECK(pool.trim() == cached);
  CHECK(pool.stats().allocated_bytes == 0);
  pool.set_limit_bytes(0);  // no limit
  PoolBuffer huge = pool.acquire(1 << 20);
  CHECK(huge.capacity() == std::size_t{1} << 20);
}

TEST_CASE("Pool: outstanding and high water are exact; release is safe early and twice; blocks are reused") {
  MemoryPool pool("test", PoolMemory::device);
  {
    PoolBuffer a = pool.acquire(1000);
    PoolBuffer b = pool.acquire(5000);
    CHECK(pool.outstanding_bytes() == 6000);
    CHECK(pool.high_water_bytes() == 6000);
    void* pa = a.data();
    a.release();
    a.release();
    CHECK(!a);
    CHECK(pool.outstanding_bytes() == 5000);
    PoolBuffer c = pool.acquire(900);
    CHECK(c.data() == pa);  // same size class: reused
    CHECK(pool.high_water_bytes() == 6000);
  }
  CHECK(pool.outstanding_bytes() == 0);
  CHECK(pool.stats().acquisitions == pool.stats().releases);
  CHECK_THROWS_AS(pool.acquire(0), Error);
}

TEST_CASE("Pool: concurrent acquire and release balance") {
  MemoryPool pool("test", PoolMemory::pinned_host);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 200; ++i) {
        PoolBuffer b = pool.acquire(static_cast<std::size_t>(100 + 37 * i + t));
        static_cast<char*>(b.data())[0] = 1;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(pool.outstanding_bytes() == 0);
  CHECK(pool.high_water_bytes() > 0);
}

TEST_CASE("Packet: each direction is one contiguous range; the device copy is a distinct allocation") {
  Grid g(small_tiled_spec());
  fill_pattern(g);
  MemoryPool pinned("p", PoolMemory::pinned_host), device("d", PoolMemory::device);
  PacketVariables vars;
  vars.copy_in = {0};
  vars.copy_in_out = {1};
  vars.copy_out = {2};
  vars.scratch = 1;
  DataPacket p(g, DataType::packet_of_blocks, vars, pinned, device);
  p.add_block(0);
  p.add_block(3);
  p.pack();
  CHECK(p.state() == DataPacket::State::packed);
  const auto& e0 = p.entry(0);
  // sections in order: in < in_out < out < scratch; H2D covers metadata+in+in_out, D2H in_out+out
  CHECK(e0.offset[0] < e0.offset[1]);
  CHECK(e0.offset[1] < e0.offset[2]);
  CHECK(e0.offset[2] < e0.offset[3]);
  CHECK(p.bytes_to_device() == p.entry(0).offset[2] * sizeof(double));
  CHECK(p.bytes_to_host() == (p.entry(0).offset[3] - p.entry(0).offset[1]) * sizeof(double));
  CHECK(p.host_var(1, 0)(1, 2, 3) == g.data()(3, 0, 1, 2, 3));
  CHECK_THROWS_WITH_AS(p.device_var(0, 0), doctest::Contains("data mover"), Error);
  // The scratch variables live on the device alone: the pinned buffer ends where they begin.
  CHECK(pinned.outstanding_bytes() == p.entry(0).offset[3] * sizeof(double));

  void* host_side = p.host_var(1, 1).data();
  ThreadSpaces spaces;
  DataMover{MoveDirection::host_to_device}(p, spaces.device());
  auto d1 = p.device_var(1, 1);
  CHECK(static_cast<void*>(d1.data()) != host_side);
  CHECK(static_cast<void*>(d1.data()) != static_cast<void*>(g.block_pointer(3)));
  CHECK(device.outstanding_bytes() == p.buffer_bytes());
  // metadata travelled with the data and holds the device addresses
  auto meta = Kokkos::View<PacketEntryMeta*, DeviceMemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
      reinterpret_cast<PacketEntryMeta*>(reinterpret_cast<std::uintptr_t>(d1.data()) -
                                         (p.entry(1).offset[1]) * sizeof(double)),
      2);
  auto meta_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), meta);
  CHECK(meta_h(1).block == 3);
  CHECK(meta_h(1).device_address[1] == reinterpret_cast<std::uintptr_t>(d1.data()));
  // compute on the device: out = in + in_out
  for (std::size_t e = 0; e < 2; ++e) {
    auto in = p.device_var(e, 0), io = p.device_var(e, 1), out = p.device_var(e, 2), s = p.device_scratch(e, 0);
    Kokkos::parallel_for(
        Kokkos::RangePolicy<DeviceTaskSpace>(spaces.device(), 0, static_cast<int>(in.extent(0))), KOKKOS_LAMBDA(int i) {
          for (std::size_t j = 0; j < in.extent(1); ++j)
            for (std::size_t k = 0; k < in.extent(2); ++k) {
              s(i, j, k) = in(i, j, k);
              out(i, j, k) = s(i, j, k) + io(i, j, k);
              io(i, j, k) = -io(i, j, k);
            }
        });
  }
  Grid before = g.clone();
  DataMover{MoveDirection::device_to_device}(p, spaces.device());
  // The moved packet's metadata names its new buffer, for kernels that read it there.
  auto moved = Kokkos::View<PacketEntryMeta*, DeviceMemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
      const_cast<PacketEntryMeta*>(p.device_entries()), 2);
  auto moved_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), moved);
  CHECK(moved_h(1).device_address[1] == reinterpret_cast<std::uintptr_t>(p.device_var(1, 1).data()));
  CHECK(moved_h(1).device_address[1] != reinterpret_cast<std::uintptr_t>(d1.data()));
  DataMover{MoveDirection::device_to_host}(p, spaces.device());
  Unpacker()(p);
  CHECK(p.state() == DataPacket::State::unpacked);
  CHECK(pinned.outstanding_bytes() == 0);
  CHECK(device.outstanding_bytes() == 0);
  auto h = g.data(), h0 = before.data();
  for (int b : {0, 3})
    for (int i = 0; i < 10; ++i)
      for (int k = 0; k < 6; ++k) {
        CHECK(h(b, 0, i, 4, k) == h0(b, 0, i, 4, k));
        CHECK(h(b, 1, i, 4, k) == -h0(b, 1, i, 4, k));
        CHECK(h(b, 2, i, 4, k) == doctest::Approx(h0(b, 0, i, 4, k) + h0(b, 1, i, 4, k)));
      }
  CHECK(h(1, 2, 3, 3, 3) == h0(1, 2, 3, 3, 3));  // block 1 was not in the packet
  p.release();
  p.release();
}

TEST_CASE("Packet: tile boxes are packed cell by cell and unpacked into exactly their box") {
  Grid g(small_tiled_spec({3, 5, 0}));  // tiles that are neither whole planes nor aligned
  fill_pattern(g);
  const Grid before = g.clone();
  MemoryPool pinned("p", PoolMemory::pinned_host), device("d", PoolMemory::device);
  PacketVariables vars;
  vars.copy_in = {0, 2};
  vars.copy_out = {1};
  DataPacket p(g, DataType::packet_of_tiles, vars, pinned, device);
  p.add_tile(1, 1);
  p.add_tile(2, g.tiles_per_block() - 1);
  p.pack();
  for (std::size_t e = 0; e < 2; ++e) {
    const auto& m = p.entry(e);
    for (int v : {0, 2}) {
      const auto packed = p.host_var(e, v);
      for (int i = m.lo[0]; i < m.hi[0]; ++i)
        for (int j = m.lo[1]; j < m.hi[1]; ++j)
          for (int k = m.lo[2]; k < m.hi[2]; ++k)
            REQUIRE(packed(i - m.lo[0], j - m.lo[1], k - m.lo[2]) == g.data()(m.block, v, i, j, k));
    }
  }
  ThreadSpaces spaces;
  DataMover{MoveDirection::host_to_device}(p, spaces.device());
  for (std::size_t e = 0; e < 2; ++e) {
    auto in = p.device_var(e, 2), out = p.device_var(e, 1);
    Kokkos::parallel_for(
        Kokkos::RangePolicy<DeviceTaskSpace>(spaces.device(), 0, static_cast<int>(in.extent(0))), KOKKOS_LAMBDA(int i) {
          for (std::size_t j = 0; j < in.extent(1); ++j)
            for (std::size_t k = 0; k < in.extent(2); ++k) out(i, j, k) = 2.0 * in(i, j, k);
        });
  }
  DataMover{MoveDirection::device_to_host}(p, spaces.device());
  Unpacker()(p);
  const auto h = g.data(), h0 = before.data();
  std::size_t changed = 0, expected = 0;
  for (int b = 0; b < g.n_blocks(); ++b)
    for (int i = 0; i < static_cast<int>(h.extent(2)); ++i)
      for (int j = 0; j < static_cast<int>(h.extent(3)); ++j)
        for (int k = 0; k < static_cast<int>(h.extent(4)); ++k) {
          bool inside = false;
          for (std::size_t e = 0; e < 2; ++e) {
            const auto& m = p.entry(e);
            inside = inside || (m.block == b && i >= m.lo[0] && i < m.hi[0] && j >= m.lo[1] && j < m.hi[1] &&
                                k >= m.lo[2] && k < m.hi[2]);
          }
          expected += inside;
          const double want = inside ? 2.0 * h0(b, 2, i, j, k) : h0(b, 1, i, j, k);
          changed += h(b, 1, i, j, k) != h0(b, 1, i, j, k);
          REQUIRE(h(b, 1, i, j, k) == want);
          REQUIRE(h(b, 0, i, j, k) == h0(b, 0, i, j, k));
        }
  CHECK(expected == static_cast<std::size_t>(p.entry(0).n_cells + p.entry(1).n_cells));
  CHECK(changed > 0);
}

TEST_CASE("Packet: release is safe early, buffers return when the last owner drops the packet") {
  Grid g(small_tiled_spec());
  MemoryPool pinned("p", PoolMemory::pinned_host), device("d", PoolMemory::device);
  {
    auto p = std::make_shared<DataPacket>(g, DataType::packet_of_tiles, PacketVariables{}, pinned, device);
    p->add_tile(1, 2);
    CHECK_THROWS_AS(p->add_block(1), Error);
    p->pack();
    ThreadSpaces spaces;
    p->copy_to_device(spaces.device());
    spaces.fence();
    CHECK(device.outstanding_bytes() > 0);
    auto copy = p;
    p.reset();
    CHECK(device.outstanding_bytes() > 0);
  }
  CHECK(pinned.outstanding_bytes() == 0);
  CHECK(device.outstanding_bytes() == 0);
  DataPacket early(g, DataType::packet_of_blocks, {}, pinned, device);
  early.release();
  early.release();
  CHECK_THROWS_WITH_AS(early.pack(), doctest::Contains("released"), Error);
  PacketVariables twice;
  twice.copy_in = {0};
  twice.copy_out = {0};
  CHECK_THROWS_WITH_AS(DataPacket(g, DataType::packet_of_blocks, twice, pinned, device),
                       doctest::Contains("variable 0"), Error);
}

TEST_CASE("Splitter: packets split into their blocks and tiles only once unpacked") {
  Grid g(small_tiled_spec());
  MemoryPool pinned("p", PoolMemory::pinned_host), device("d", PoolMemory::device);
  DataPacket p(g, DataType::packet_of_blocks, {}, pinned, device);
  p.add_block(2);
  p.add_block(0);
  CHECK_THROWS_WITH_AS(Splitter(DataType::tile).split(p), doctest::Contains("not unpacked"), Error);
  p.pack();
  ThreadSpaces spaces;
  DataMover{MoveDirection::host_to_device}(p, spaces.device());
  DataMover{MoveDirection::device_to_host}(p, spaces.device());
  Unpacker()(p);
  auto tiles = Splitter(DataType::tile).split(p);
  CHECK(tiles.size() == 8);
  CHECK(static_cast<Tile&>(*tiles[0]).block_id() == 2);
  auto blocks = Splitter(DataType::block).split(p);
  CHECK(blocks.size() == 2);
  CHECK(Splitter(DataType::tile).split(Block(g, 1)).size() == 4);
}

TEST_CASE("Aggregator: tiles of one block always land in one packet; incomplete blocks are an error at flush") {
  Grid g(small_tiled_spec());
  MemoryPool pinned("p", PoolMemory::pinned_host), device("d", PoolMemory::device);
  Aggregator agg("agg", g, DataType::tile, DataType::packet_of_tiles, 2, {}, pinned, device);
  std::vector<std::shared_ptr<DataItem>> out;
  // interleave tiles of blocks 0 and 1, then block 2
  for (int t = 0; t < 4; ++t)
    for (int b : {0, 1}) {
      auto r = agg.add(Tile(g, b, t));
      out.insert(out.end(), r.begin(), r.end());
    }
  REQUIRE(out.size() == 1);
  auto& p = static_cast<DataPacket&>(*out[0]);
  CHECK(p.size() == 8);
  CHECK(p.block_ids() == std::vector<int>{0, 1});
  CHECK(agg.add(Tile(g, 3, 0)).empty());
  CHECK(agg.incomplete_blocks() == 1);
  CHECK_THROWS_WITH_AS(agg.flush(), doctest::Contains("block 3 (1 of 4 tiles)"), Error);
  Aggregator blocks("b", g, DataType::block, DataType::packet_of_blocks, 3, {}, pinned, device);
  CHECK(blocks.add(Block(g, 0)).empty());
  auto rest = blocks.flush();
  REQUIRE(rest.size() == 1);
  CHECK(static_cast<DataPacket&>(*rest[0]).state() == DataPacket::State::packed);
  out.clear();
  rest.clear();
  CHECK(pinned.outstanding_bytes() == 0);
}
