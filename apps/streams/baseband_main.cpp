// korch-baseband: transmits random frames through the 802.11a-style chain, adds noise, receives
// them sequentially and with |>>>| before the Viterbi decoder, and checks the payload bits.
//
//   korch-baseband [--frames N] [--max-len BYTES] [--sigma S] [--threads T] [--seed X] [--dump]
//   (korch-baseband --help; exit status 0 success, 1 failure or wrong bits, 2 usage error)
// --dump prints the receiver's execution map, plan and Graphviz text.
#include <korch/cli/program.hpp>
#include <korch/streams.hpp>
#include "baseband.hpp"

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdio>
#include <string>

using namespace korch::streams;
namespace bb = korch::streams::baseband;

int main(int argc, char** argv) {
  korch::cli::Program program("korch-baseband",
                              "transmits random frames through the 802.11a-style chain, adds noise, receives\n"
                              "them sequentially and with |>>>| before the Viterbi decoder, checks the payload bits.");
  std::size_t frames = 50, max_len = 1500;
  double sigma = 0.4;
  unsigned threads = 2;
  std::uint64_t seed = 1;
  bool dump = false;
  CLI::App& app = program.app();
  korch::cli::add_integer(app, "--frames", frames, "frames to transmit", 1);
  korch::cli::add_integer(app, "--max-len", max_len, "longest payload in bytes; the length field has 16 bits", 1, 65535)
      ->type_name("BYTES");
  korch::cli::add_real(app, "--sigma", sigma, "noise standard deviation", 0.0)->type_name("S");
  korch::cli::add_integer(app, "--threads", threads, "threads of the |>>>| runs", 1, 1024);
  korch::cli::add_integer(app, "--seed", seed, "seed of the frames; the noise uses seed + 1", 0, 18446744073709551614.0L);
  app.add_flag("--dump", dump, "print the receiver's execution map, plan and Graphviz text first");
  program.add_note("Exit status 1 also when the received payload bits differ from the sent ones.");
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    program.set_allocation_context(std::to_string(frames) + " frames of up to " + std::to_string(max_len) +
                                   " bytes and their samples");
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
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
    const double s = std::chrono::duration<double>(t1 - t0).count(), rs = std::chrono::duration<double>(t2 - t1).count(),
                 rp = std::chrono::duration<double>(t3 - t2).count();
    std::printf("frames %zu, payload bits %zu, complex samples %zu, noise sigma %.3f\n", frames, expect.size(),
                samples.size() / 2, sigma);
    std::printf("transmit (|>>>|, %u threads): %.3f s\n", threads, s);
    std::printf("receive sequential: %.3f s; |>>>| on %u threads: %.3f s (%.2fx); commits %llu (%llu items), rollbacks %llu (%llu reads undone)\n",
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
