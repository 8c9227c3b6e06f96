// PLEG relist hashing: ids and pod uids are filed in the differ's open-addressing indexes
// (pleg_index.h) by these hashes. wyhash-style: 64x64->128 multiply-fold mixing, 16 bytes per
// round. Not for adversaries; a collision only costs a probe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace kts {
namespace pleg {

constexpr uint64_t kP0 = 0xa0761d6478bd642fULL;
constexpr uint64_t kP1 = 0xe7037ed1a0b428dbULL;
constexpr uint64_t kP2 = 0x8ebc6af09c88c6e3ULL;

inline uint64_t Mum(uint64_t a, uint64_t b) {
  const __uint128_t r = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}
inline uint64_t R8(const char* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
inline uint64_t R4(const char* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

inline uint64_t Hash(std::string_view s, uint64_t seed) {
  const char* p = s.data();
  size_t n = s.size();
  seed ^= Mum(seed ^ kP0, kP1);
  uint64_t a, b;
  if (n <= 16) {
    if (n >= 4) {
      const size_t q = (n >> 3) << 2;
      a = (R4(p) << 32) | R4(p + q);
      b = (R4(p + n - 4) << 32) | R4(p + n - 4 - q);
    } else if (n > 0) {
      a = (static_cast<uint64_t>(static_cast<uint8_t>(p[0])) << 16) | (static_cast<uint64_t>(static_cast<uint8_t>(p[n >> 1])) << 8) |
          static_cast<uint8_t>(p[n - 1]);
      b = 0;
    } else {
      a = b = 0;
    }
  } else {
    size_t i = n;
    while (i > 16) {
      seed = Mum(R8(p) ^ kP1, R8(p + 8) ^ seed);
      p += 16;
      i -= 16;
    }
    a = R8(p + i - 16);
    b = R8(p + i - 8);
  }
  return Mum(kP1 ^ n, Mum(a ^ kP1, b ^ seed ^ kP2));
}

constexpr uint64_t kIdSeed = 0x6b75626c65742d74ULL;  // "kubelet-t"
constexpr uint64_t kPodSeed = 0x706c65672d706f64ULL;

inline uint64_t Fmix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

}  // namespace pleg
}  // namespace kts
