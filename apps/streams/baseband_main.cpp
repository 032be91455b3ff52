// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-baseband: transmits random frames through the 802.11a-style chain, adds noise, receives
// them sequentially and with |>>>| before the Viterbi decoder, and checks the payload bits.
//
//   korch-baseband [--frames N] [--max-len BYTES] [--sigma S] [--threads T] [--seed X] [--dump]
//   (korch-baseband --help; exit status 0 success, 1 failure or wrong bits, 2 usage error)
// --dump prints the receiver's execution map, plan and Graphviz text.
#include <korch/streams.hpp>
#include "baseband.hpp"
#include "baseband_command_line.hpp"

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdio>
#include <string>

using namespace korch::streams;
namespace bb = korch::streams::baseband;

int main(int argc, char** argv) {
  bb::BasebandArgs args;
  const auto program = bb::baseband_command_line(args);
  if (auto rc = program->parse(argc, argv)) return *rc;
  const std::size_t frames = args.frames, max_len = args.max_len;
  const double sigma = args.sigma;
  const unsigned threads = args.threads;
  const std::uint64_t seed = args.seed;
  const bool dump = args.dump;
  return program->run([&] {
    program->set_allocation_context(std::to_string(frames) + " frames of up to " + std::to_string(max_len) +
                                    " bytes and their samples");
    Kokkos::ScopeGuard kokkos(program->kokkos_argc(), program->kokkos_argv());
    const auto fr = bb::random_frames(frames, 1, max_len, seed);
    const auto expect = bb::payload_bits(fr);
    ParallelOptions o;
    o.threads = threads;
    o.commit_queue_capacity = 4096;
    o.queue_capacity = 1024;
    if (dump) {
      Layout l(bb::receiver(true), threads);
      std::printf("receiver: %s\nexecution map: %s\nplan:\n%s\n%s", to_string(bb::receiver(true)).c_str(),
                  l.map().text().c_str(), l.plan().text().c_str(), l.dot().c_str());
    }
    auto t0 = std::chrono::steady_clock::now();
    auto samples = run_parallel(bb::transmitter(true), bb::tx_input(fr), o).output;
    auto t1 = std::chrono::steady_clock::now();
    bb::add_noise(samples, sigma, seed + 1);
    const auto seq = run_sequential(bb::receiver(false), samples);
    auto t2 = std::chrono::steady_clock::now();
    const auto par = run_parallel(bb::receiver(true), samples, o);
    auto t3 = std::chrono::steady_clock::now();
    std::size_t errors = 0;
    for (std::size_t i = 0; i < expect.size() && i < par.output.size(); ++i) errors += expect[i] != par.output[i];
    const double s = std::chrono::duration<double>(t1 - t0).count(),
                 rs = std::chrono::duration<double>(t2 - t1).count(),
                 rp = std::chrono::duration<double>(t3 - t2).count();
    std::printf("frames %zu, payload bits %zu, complex samples %zu, noise sigma %.3f\n", frames, expect.size(),
                samples.size(), sigma);
    std::printf("transmit (|>>>|, %u threads): %.3f s\n", threads, s);
    std::printf(
        "receive sequential: %.3f s; |>>>| on %u threads: %.3f s (%.2fx); commits %llu (%llu items), rollbacks %llu "
        "(%llu reads undone)\n",
        rs, threads, rp, rs / rp, static_cast<unsigned long long>(par.commits.commits),
        static_cast<unsigned long long>(par.commits.committed_items),
        static_cast<unsigned long long>(par.commits.rollbacks),
        static_cast<unsigned long long>(par.commits.rolled_back_items));
    const bool ok = par.output.size() == expect.size() && errors == 0 && seq.output == par.output;
    std::printf("payload bits: %s (%zu bit errors, %zu of %zu bits received, sequential %s)\n", ok ? "exact" : "WRONG",
                errors, par.output.size(), expect.size(), seq.output == par.output ? "identical" : "DIFFERENT");
    return ok ? 0 : 1;
  });
}
