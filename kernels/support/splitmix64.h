// splitmix64: the one seeded 64-bit generator of the project (Steele, Lea and Flood's
// SplitMix64: add the golden-ratio gamma to the state, then mix the sum). Every seeded
// stream (key samples, bootstrap resampling, random page sequences, test data) draws from
// it, so a seed means the same stream everywhere.
//
// Invariants: pure and header-only; the streams are bit-exact across builds and targets
// (no floating point, no platform-dependent width). uniform_below(state, n) is the
// multiply-shift reduction (Lemire): in [0, n) for n > 0, with a bias below n / 2^64.
#pragma once

#include <cstdint>

namespace st {

inline constexpr uint64_t kSplitmix64Gamma = 0x9e3779b97f4a7c15ull;

// The output mix of one step: a bijection of 64-bit words.
inline constexpr uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// One step: advances state by the gamma and returns the mix of the new state.
inline constexpr uint64_t splitmix64(uint64_t& state) { return splitmix64_mix(state += kSplitmix64Gamma); }

// A draw in [0, n) from the next step (n > 0).
inline constexpr uint64_t uniform_below(uint64_t& state, uint64_t n) {
  return uint64_t((unsigned __int128)splitmix64(state) * n >> 64);
}

}  // namespace st
