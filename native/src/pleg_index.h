// The relist differ's index (pleg.h): open addressing (linear probing, backward-shift deletion)
// of uint32 slots by a 64-bit hash (pleg_hash.h). It files indexes only; the caller compares keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kts {
namespace pleg {

class HashIndex {
 public:
  static constexpr uint32_t kNone = 0xffffffffu;
  template <class Eq>
  uint32_t Find(uint64_t hash, Eq eq) const {
    if (slots_.empty()) return kNone;
    const uint32_t h32 = static_cast<uint32_t>(hash);
    for (size_t i = h32 & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.idx1 == 0) return kNone;
      if (s.h32 == h32 && eq(s.idx1 - 1)) return s.idx1 - 1;
    }
  }
  void Prefetch(uint64_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[static_cast<uint32_t>(hash) & mask_]);
  }
  // The index filed in the hash's home slot when its hash matches, else kNone (for prefetching).
  uint32_t Home(uint64_t hash) const {
    if (slots_.empty()) return kNone;
    const Slot& s = slots_[static_cast<uint32_t>(hash) & mask_];
    return s.idx1 != 0 && s.h32 == static_cast<uint32_t>(hash) ? s.idx1 - 1 : kNone;
  }
  void Insert(uint64_t hash, uint32_t idx);
  void Erase(uint64_t hash, uint32_t idx);
  void Clear();
  size_t size() const { return count_; }
  // For the invariant check: every slot's idx, with the hash it was filed under.
  template <class Fn>
  void ForEach(Fn fn) const {
    for (const Slot& s : slots_)
      if (s.idx1 != 0) fn(s.idx1 - 1, s.h32);
  }

 private:
  struct Slot {
    uint32_t idx1 = 0;  // index + 1; 0 = empty
    uint32_t h32 = 0;   // low 32 bits of the hash (home slot = h32 & mask_)
  };
  void Grow();
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

}  // namespace pleg
}  // namespace kts
