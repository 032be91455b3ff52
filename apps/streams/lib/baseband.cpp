// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "baseband.hpp"

#include <korch/streams/typed.hpp>

#include <array>
#include <cmath>
#include <random>

namespace korch::streams::baseband {

namespace {
constexpr unsigned kG0 = 0133, kG1 = 0171;
constexpr unsigned kScramblerSeed = 0x5D;
inline unsigned parity(unsigned x) { return static_cast<unsigned>(__builtin_parity(x)); }
inline unsigned bit(Item x) { return x > 0.5 ? 1u : 0u; }
constexpr float kInvSqrt2 = 0.70710678118654752440f;

std::size_t padded_bits(Value len_bytes) {
  const std::size_t bits = static_cast<std::size_t>(len_bytes) * 8;
  return (bits + kBlockBits - 1) / kBlockBits * kBlockBits;
}
}  // namespace

void scramble(const Item* in, Item* out, std::size_t n, unsigned& state) {
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned fb = ((state >> 6) ^ (state >> 3)) & 1u;  // x^7 + x^4 + 1
    state = ((state << 1) | fb) & 0x7Fu;
    out[i] = static_cast<Item>(bit(in[i]) ^ fb);
  }
}

void conv_encode(const Item* bits, Item* coded) {
  unsigned state = 0;  // the previous 6 input bits, most recent in bit 5
  for (std::size_t i = 0; i < kBlockBits + kTailBits; ++i) {
    const unsigned b = i < kBlockBits ? bit(bits[i]) : 0u;
    const unsigned reg = (b << 6) | state;
    coded[2 * i] = static_cast<Item>(parity(reg & kG0));
    coded[2 * i + 1] = static_cast<Item>(parity(reg & kG1));
    state = reg >> 1;
  }
}

void viterbi_decode(const Item* soft, Item* bits) {
  // Butterflies: next states ns and ns|32 share the predecessors s0 = 2j, s1 = 2j+1 (j = ns & 31).
  // The branch metric of a register is one of +-y0 +-y1, chosen by its two output bits.
  struct Tables {
    std::array<std::uint8_t, 128> code;  // (out0 << 1) | out1 per 7-bit register
    Tables() {
      for (unsigned reg = 0; reg < 128; ++reg)
        code[reg] = static_cast<std::uint8_t>((parity(reg & kG0) << 1) | parity(reg & kG1));
    }
  };
  static const Tables t;
  constexpr std::size_t steps = kBlockBits + kTailBits;
  std::array<float, 64> pm, next;
  pm.fill(-1e30f);
  pm[0] = 0.f;
  std::array<std::uint64_t, steps> decisions{};
  for (std::size_t i = 0; i < steps; ++i) {
    const float y0 = static_cast<float>(soft[2 * i]), y1 = static_cast<float>(soft[2 * i + 1]);
    const float bm[4] = {-y0 - y1, -y0 + y1, y0 - y1, y0 + y1};
    std::uint64_t dec = 0;
    for (unsigned j = 0; j < 32; ++j) {
      const unsigned s0 = 2 * j, s1 = s0 + 1;
      for (unsigned b = 0; b < 2; ++b) {
        const unsigned ns = (b << 5) | j;
        const float m0 = pm[s0] + bm[t.code[(b << 6) | s0]];
        const float m1 = pm[s1] + bm[t.code[(b << 6) | s1]];
        const bool take1 = m1 > m0;
        next[ns] = take1 ? m1 : m0;
        dec |= static_cast<std::uint64_t>(take1) << ns;
      }
    }
    decisions[i] = dec;
    pm = next;
  }
  unsigned s = 0;  // the tail drives the encoder back to state 0
  for (std::size_t i = steps; i-- > 0;) {
    const unsigned d = static_cast<unsigned>((decisions[i] >> s) & 1u);
    if (i < kBlockBits) bits[i] = static_cast<Item>(s >> 5);
    s = ((s << 1) & 63u) | d;
  }
}

std::size_t interleave_index(std::size_t k) { return (kCodedBits / 16) * (k % 16) + k / 16; }

namespace {

Comp encode() {
  return map("encode", {kBlockBits, kCodedBits}, [](const Item* in, Item* out) { conv_encode(in, out); });
}
Comp interleave() {
  return map("interleave", {kCodedBits, kCodedBits}, [](const Item* in, Item* out) {
    for (std::size_t k = 0; k < kCodedBits; ++k) out[interleave_index(k)] = in[k];
  });
}
Comp deinterleave() {
  return map("deinterleave", {kCodedBits, kCodedBits}, [](const Item* in, Item* out) {
    for (std::size_t k = 0; k < kCodedBits; ++k) out[k] = in[interleave_index(k)];
  });
}
// Bits to symbols: BPSK puts one bit on the real axis, QPSK one on each axis at unit energy.
Comp bpsk() {
  return map<double, Sample>("bpsk", {1, 1},
                             [](const double* in, Sample* out) { out[0] = Sample(bit(in[0]) ? 1.f : -1.f, 0.f); })
      .comp();
}
Comp qpsk() {
  return map<double, Sample>("qpsk", {2, 1},
                             [](const double* in, Sample* out) {
                               out[0] =
                                   Sample(bit(in[0]) ? kInvSqrt2 : -kInvSqrt2, bit(in[1]) ? kInvSqrt2 : -kInvSqrt2);
                             })
      .comp();
}
// Symbols to soft bits (bit 1 ~ +1, bit 0 ~ -1).
Comp bpsk_demap() {
  return map<Sample, double>("bpsk_demap", {1, 1}, [](const Sample* in, double* out) { out[0] = in[0].real(); }).comp();
}
Comp qpsk_demap() {
  return map<Sample, double>("qpsk_demap", {1, 2},
                             [](const Sample* in, double* out) {
                               out[0] = in[0].real() / kInvSqrt2;
                               out[1] = in[0].imag() / kInvSqrt2;
                             })
      .comp();
}
Comp viterbi() {
  return map("viterbi", {kCodedBits, kBlockBits}, [](const Item* in, Item* out) { viterbi_decode(in, out); });
}
Comp scrambler(const char* name) {
  return transformer(name, {1, 1}, [](const Env&) {
    auto state = std::make_shared<unsigned>(kScramblerSeed);  // fresh per frame
    return Kernel([state](const Item* in, Item* out) { scramble(in, out, 1, *state); });
  });
}

// Takes the 16 length bits; emits one header block (length bits then zeros); returns the length.
Comp fmt_header() {
  return take_block(
      "fmt_header", [](const Env&) { return kLengthBits; },
      [](const Item* in, std::size_t n, std::vector<Item>& out) {
        Value len = 0;
        for (std::size_t i = 0; i < n; ++i) {
          len |= static_cast<Value>(bit(in[i])) << i;
          out.push_back(static_cast<Item>(bit(in[i])));
        }
        out.resize(kBlockBits, 0.0);
        return len;
      });
}
Comp parse_header() {
  return take_block(
      "parse_header", [](const Env&) { return kBlockBits; },
      [](const Item* in, std::size_t, std::vector<Item>&) {
        Value len = 0;
        for (std::size_t i = 0; i < kLengthBits; ++i) len |= static_cast<Value>(bit(in[i])) << i;
        return len;
      });
}
// Takes the payload bits and emits them zero-padded to whole blocks.
Comp take_payload() {
  return take_block(
      "take_payload", [](const Env& e) { return static_cast<std::size_t>(e.at("len")) * 8; },
      [](const Item* in, std::size_t n, std::vector<Item>& out) {
        out.assign(in, in + n);
        out.resize((n + kBlockBits - 1) / kBlockBits * kBlockBits, 0.0);
        return Value(n / 8);
      });
}
// Takes the padded blocks of one frame and emits its payload bits.
Comp emit_payload() {
  return computer("emit_payload", [](const Env& e) -> std::unique_ptr<ComputerBody> {
    struct Body : ComputerBody {
      std::size_t bits, padded;
      explicit Body(Value len) : bits(static_cast<std::size_t>(len) * 8), padded(padded_bits(len)) {}
      std::size_t need() override { return padded; }
      bool step(const Item* in, std::vector<Item>& out, Value& result) override {
        out.assign(in, in + bits);
        result = static_cast<Value>(bits / 8);
        return true;
      }
    };
    return std::make_unique<Body>(e.at("len"));
  });
}

}  // namespace

Comp transmitter(bool par) {
  Comp header = fmt_header() >> (encode() >> interleave() >> bpsk());
  Comp front = take_payload() >> scrambler("scramble") >> encode();
  Comp back = interleave() >> qpsk();
  Comp payload = par ? (front | back) : (front >> back);
  return repeat(bind("len", header, payload));
}

Comp receiver(bool par) {
  Comp hfront = bpsk_demap() >> deinterleave();
  Comp hback = viterbi() >> parse_header();
  Comp header = par ? (hfront | hback) : (hfront >> hback);
  Comp pfront = qpsk_demap() >> deinterleave();
  // |>>>| before the Viterbi decoder (as in Ziria) and after it, so that the decoder has a thread
  // of its own and the cheap stages share the other.
  Comp ptail = scrambler("descramble") >> emit_payload();
  Comp payload = par ? (pfront | viterbi() | ptail) : (pfront >> viterbi() >> ptail);
  return repeat(bind("len", header, payload));
}

std::vector<Item> tx_input(const std::vector<std::vector<std::uint8_t>>& frames) {
  std::vector<Item> v;
  for (const auto& f : frames) {
    for (std::size_t i = 0; i < kLengthBits; ++i) v.push_back(static_cast<Item>((f.size() >> i) & 1u));
    for (std::uint8_t byte : f) {
      for (int i = 0; i < 8; ++i) v.push_back(static_cast<Item>((byte >> i) & 1u));
    }
  }
  return v;
}

std::vector<Item> payload_bits(const std::vector<std::vector<std::uint8_t>>& frames) {
  std::vector<Item> v;
  for (const auto& f : frames) {
    for (std::uint8_t byte : f) {
      for (int i = 0; i < 8; ++i) v.push_back(static_cast<Item>((byte >> i) & 1u));
    }
  }
  return v;
}

void add_noise(std::vector<Item>& samples, double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0.0, sigma);
  for (auto& s : samples) {
    const Sample x = s.as<Sample>();
    const double re = x.real() + n(rng);
    const double im = x.imag() + n(rng);
    s = Item::of(Sample(static_cast<float>(re), static_cast<float>(im)));
  }
}

std::vector<std::vector<std::uint8_t>> random_frames(std::size_t count, std::size_t min_len, std::size_t max_len,
                                                     std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::uint8_t>> frames(count);
  for (auto& f : frames) {
    f.resize(min_len + rng() % (max_len - min_len + 1));
    for (auto& b : f) b = static_cast<std::uint8_t>(rng());
  }
  return frames;
}

}  // namespace korch::streams::baseband
