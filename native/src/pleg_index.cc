// See pleg_index.h.
#include "pleg_index.h"

namespace kts {
namespace pleg {

void HashIndex::Grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  const size_t cap = old.empty() ? 64 : old.size() * 2;
  slots_.assign(cap, Slot{});
  mask_ = cap - 1;
  for (const Slot& s : old) {
    if (s.idx1 == 0) continue;
    size_t i = s.h32 & mask_;
    while (slots_[i].idx1 != 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

void HashIndex::Insert(uint64_t hash, uint32_t idx) {
  if ((count_ + 1) * 2 > slots_.size()) Grow();
  const uint32_t h32 = static_cast<uint32_t>(hash);
  size_t i = h32 & mask_;
  while (slots_[i].idx1 != 0) i = (i + 1) & mask_;
  slots_[i].idx1 = idx + 1;
  slots_[i].h32 = h32;
  count_++;
}

void HashIndex::Erase(uint64_t hash, uint32_t idx) {
  if (slots_.empty()) return;
  const uint32_t h32 = static_cast<uint32_t>(hash);
  size_t i = h32 & mask_;
  for (;; i = (i + 1) & mask_) {
    if (slots_[i].idx1 == 0) return;  // not filed: nothing to do
    if (slots_[i].idx1 == idx + 1) break;
  }
  // Backward shift: pull later entries of the probe run into the hole when their home allows.
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask_;
    if (slots_[j].idx1 == 0) break;
    const size_t home = slots_[j].h32 & mask_;
    const bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    slots_[i] = slots_[j];
    i = j;
  }
  slots_[i] = Slot{};
  count_--;
}

void HashIndex::Clear() {
  slots_.clear();
  slots_.shrink_to_fit();
  mask_ = 0;
  count_ = 0;
}

}  // namespace pleg
}  // namespace kts
