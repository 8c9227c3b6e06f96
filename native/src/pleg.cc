// See pleg.h: the relist differ (retained records and pods, the diff, the output buffer).
#include "pleg.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "pleg_hash.h"

namespace kts {
namespace pleg {
namespace {

// Equality of two byte ranges of length n (a key compare nearly always finds them equal, so
// differences are accumulated and tested once). SSE2 (every x86-64): 16-byte chunks, the last
// one overlapping the one before it; elsewhere 8-byte words the same way. Container ids are 64
// bytes, pod uids 36.
inline bool SameBytes(const char* a, const char* b, size_t n) {
#if defined(__SSE2__)
  if (n >= 16) {
    const auto chunk = [&](size_t i) {
      return _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)), _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    };
    __m128i eq = chunk(n - 16);
    for (size_t i = 0; i + 16 < n; i += 16) eq = _mm_and_si128(eq, chunk(i));
    return _mm_movemask_epi8(eq) == 0xffff;
  }
#endif
  if (n >= 8) {
    uint64_t diff = R8(a + n - 8) ^ R8(b + n - 8);
    for (size_t i = 0; i + 8 < n; i += 8) diff |= R8(a + i) ^ R8(b + i);
    return diff == 0;
  }
  if (n >= 4) return ((R4(a) ^ R4(b)) | (R4(a + n - 4) ^ R4(b + n - 4))) == 0;
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return false;
  return true;
}

inline bool SameString(std::string_view a, std::string_view b) { return a.size() == b.size() && SameBytes(a.data(), b.data(), a.size()); }

// A free entry of *v: the last one freed, else a new one at the end.
template <class T>
uint32_t Allocate(std::vector<T>* v, std::vector<uint32_t>* free_list) {
  if (free_list->empty()) {
    v->emplace_back();
    return static_cast<uint32_t>(v->size() - 1);
  }
  const uint32_t idx = free_list->back();
  free_list->pop_back();
  return idx;
}

}  // namespace

uint32_t RelistDiffer::FindOrAddPod(std::string_view uid, uint64_t hash) {
  uint32_t idx = pod_index_.Find(hash, [&](uint32_t i) { return pods_[i].uid.view() == uid; });
  if (idx != HashIndex::kNone) return idx;
  idx = Allocate(&pods_, &free_pods_);
  Pod& p = pods_[idx];
  p.uid.assign(uid);
  p.name.clear();
  p.ns.clear();
  p.hash = hash;
  p.refs = 0;
  p.last_seen = p.info_gen = p.ready_gen = p.event_gen = 0;
  p.info_prio = 0;
  p.live = true;
  pod_index_.Insert(hash, idx);
  return idx;
}

uint32_t RelistDiffer::AddRec(uint32_t pod, std::string_view id, uint64_t hash, uint8_t state, uint32_t seen_gen) {
  const uint32_t idx = Allocate(&recs_, &free_recs_);
  Rec& r = recs_[idx];
  r.SetKey(id, pods_[pod].uid.view());
  r.pod = pod;
  r.seen_gen = seen_gen;
  r.state = state;
  rec_index_.Insert(hash, idx);
  pods_[pod].refs++;
  live_recs_++;
  return idx;
}

void RelistDiffer::EraseRec(uint32_t idx) {
  Rec& r = recs_[idx];
  rec_index_.Erase(Hash(r.id(), kIdSeed), idx);
  pods_[r.pod].refs--;
  r.pod = HashIndex::kNone;
  r.ClearKey();
  free_recs_.push_back(idx);
  live_recs_--;
}

void RelistDiffer::Emit(uint32_t pod, std::string_view id, uint8_t old_state, uint8_t new_state) {
  const uint32_t seq = static_cast<uint32_t>(events_.size());
  pods_[pod].event_gen = gen_;
  switch (new_state) {
    case kRunning:
      events_.push_back({pod, id, kStarted, seq});
      break;
    case kExited:
      events_.push_back({pod, id, kDied, seq});
      break;
    case kUnknown:
      events_.push_back({pod, id, kChanged, seq});
      break;
    default:  // gone
      if (old_state != kExited) events_.push_back({pod, id, kDied, seq});
      events_.push_back({pod, id, kRemoved, seq + 1});
      break;
  }
}

inline uint32_t RelistDiffer::FindRec(const Item& item) const {
  // Records are keyed by (pod uid, id) but filed by the id alone: ids are unique in practice,
  // so the uid is only compared, never hashed, on the way to an existing record.
  const size_t id_len = item.id.size(), uid_len = item.uid.size();
  return rec_index_.Find(item.hash, [&](uint32_t i) {
    const Rec& r = recs_[i];
    if (r.id_len != id_len || r.uid_len != uid_len) return false;
    const char* k = r.key();
    return SameBytes(k, item.id.data(), id_len) && SameBytes(k + id_len, item.uid.data(), uid_len);
  });
}

// Looks the item up a few places ahead of its turn: its slot 16 items ahead, its record and its
// reply bytes 8 ahead, so that they are in the cache when Apply() gets there (a lookup is two
// dependent misses: the records do not fit in L2 beside a just-received reply).
void RelistDiffer::PrefetchAhead(const Item* items, size_t k, size_t n) const {
  constexpr size_t kSlotAhead = 16, kRecAhead = 8;
  if (k + kSlotAhead < n) rec_index_.Prefetch(items[k + kSlotAhead].hash);
  if (k + kRecAhead < n) {
    const Item& ahead = items[k + kRecAhead];
    const uint32_t idx = rec_index_.Home(ahead.hash);
    if (idx != HashIndex::kNone) {
      const char* r = reinterpret_cast<const char*>(&recs_[idx]);
      __builtin_prefetch(r);
      __builtin_prefetch(r + 64);
    }
    __builtin_prefetch(ahead.id.data());
    __builtin_prefetch(ahead.uid.data());
  }
}

void RelistDiffer::Apply(Item* item) {
  // Not found: new, or a duplicate of one added earlier in this relist.
  uint32_t idx = FindRec(*item);
  uint32_t pod;
  if (idx != HashIndex::kNone) {
    Rec& r = recs_[idx];
    pod = r.pod;
    if (r.seen_gen != gen_) {  // else a duplicate: the first one counts
      r.seen_gen = gen_;
      seen_++;
      if (r.state != item->state) {
        undo_.push_back({pod, idx, r.state, std::string()});
        Emit(pod, item->id, r.state, item->state);
        r.state = item->state;
      }
    }
  } else {
    pod = FindOrAddPod(item->uid, Hash(item->uid, kPodSeed));
    idx = AddRec(pod, item->id, item->hash, item->state, gen_);
    seen_++;
    undo_.push_back({pod, idx, kNonExistent, std::string()});
    Emit(pod, item->id, kNonExistent, item->state);
  }
  item->pod = pod;
  pods_[pod].last_seen = gen_;
}

void RelistDiffer::SetInfo(Pod* pod, const Item& item, uint8_t prio) {
  if (pod->info_gen == gen_ && pod->info_prio >= prio) return;
  pod->info_gen = gen_;
  pod->info_prio = prio;
  if (!SameString(pod->name, item.name)) pod->name.assign(item.name.data(), item.name.size());
  if (!SameString(pod->ns, item.ns)) pod->ns.assign(item.ns.data(), item.ns.size());
}

namespace {
void PutU32(std::vector<uint8_t>* out, size_t at, uint32_t v) {
  uint8_t* p = out->data() + at;
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}
void AppendU32(std::vector<uint8_t>* out, uint32_t v) {
  out->resize(out->size() + 4);
  PutU32(out, out->size() - 4, v);
}
void AppendBytes(std::vector<uint8_t>* out, std::string_view s) { out->insert(out->end(), s.begin(), s.end()); }
}  // namespace

void RelistDiffer::BuildOutput(uint32_t running_pods, const uint32_t counts[4]) {
  std::sort(events_.begin(), events_.end(), [&](const Event& a, const Event& b) {
    if (a.pod != b.pod) {
      const int c = pods_[a.pod].uid.view().compare(pods_[b.pod].uid.view());
      if (c != 0) return c < 0;
    }
    const int c = a.id.compare(b.id);
    if (c != 0) return c < 0;
    return a.seq < b.seq;
  });
  out_.clear();
  out_.resize(kOutputHeader);
  PutU32(&out_, 0, running_pods);
  for (int i = 0; i < 4; i++) PutU32(&out_, 4 + 4 * i, counts[i]);
  // Pods with events, in uid order (events are sorted by uid, so each pod is one run).
  uint32_t n_pods = 0;
  uint32_t last = HashIndex::kNone;
  for (const Event& e : events_) {
    if (e.pod == last) continue;
    last = e.pod;
    const Pod& p = pods_[e.pod];
    AppendU32(&out_, static_cast<uint32_t>(p.uid.view().size()));
    AppendU32(&out_, static_cast<uint32_t>(p.name.size()));
    AppendU32(&out_, static_cast<uint32_t>(p.ns.size()));
    AppendBytes(&out_, p.uid.view());
    AppendBytes(&out_, p.name);
    AppendBytes(&out_, p.ns);
    n_pods++;
  }
  uint32_t pod_pos = 0;
  last = HashIndex::kNone;
  for (const Event& e : events_) {
    if (last != HashIndex::kNone && e.pod != last) pod_pos++;
    last = e.pod;
    out_.push_back(e.type);
    AppendU32(&out_, pod_pos);
    AppendU32(&out_, static_cast<uint32_t>(e.id.size()));
    AppendBytes(&out_, e.id);
  }
  PutU32(&out_, 20, n_pods);
  PutU32(&out_, 24, static_cast<uint32_t>(events_.size()));
}

bool RelistDiffer::Diff(const uint8_t* sandboxes, size_t sandboxes_len, const uint8_t* containers,
                        size_t containers_len, std::string* error) {
  // 1. Decode everything first: a malformed reply leaves the retained state untouched.
  sandboxes_.clear();
  containers_.clear();
  uint32_t counts[4] = {0, 0, 0, 0};
  if (!DecodeSandboxesFast(sandboxes, sandboxes_len, &sandboxes_, error)) return false;
  if (!DecodeContainersFast(containers, containers_len, &containers_, counts, error)) return false;

  // 2. Diff. Nothing below can fail. Containers before sandboxes: the first record of an id in
  // a pod wins.
  gen_++;
  seen_ = 0;
  undo_.clear();
  events_.clear();
  // Pod names (first sandbox, else first container) and running pods on the way.
  uint32_t running_pods = 0;
  for (size_t k = 0, n = containers_.size(); k < n; k++) {
    PrefetchAhead(containers_.data(), k, n);
    Item& it = containers_[k];
    Apply(&it);
    SetInfo(&pods_[it.pod], it, 1);
  }
  for (size_t k = 0, n = sandboxes_.size(); k < n; k++) {
    PrefetchAhead(sandboxes_.data(), k, n);
    Item& it = sandboxes_[k];
    Apply(&it);
    Pod& p = pods_[it.pod];
    SetInfo(&p, it, 2);
    if (it.cri_state == 0 && p.ready_gen != gen_) {
      p.ready_gen = gen_;
      running_pods++;
    }
  }

  // 3. Records not seen in this relist are gone.
  gone_.clear();
  if (seen_ < live_recs_) {
    for (uint32_t i = 0; i < recs_.size(); i++) {
      const Rec& r = recs_[i];
      if (r.pod != HashIndex::kNone && r.seen_gen != gen_) gone_.push_back(i);
    }
    undo_.reserve(undo_.size() + gone_.size());  // the events view the ids copied into undo_
    for (const uint32_t i : gone_) {
      const Rec& r = recs_[i];
      undo_.push_back({r.pod, HashIndex::kNone, r.state, std::string(r.id())});
      const Undo& u = undo_.back();
      Emit(u.pod, u.id, u.prev, kNonExistent);
      EraseRec(i);
    }
  }

  // 4. Output, then forget pods out of sight for two relists (and without events or records).
  BuildOutput(running_pods, counts);
  for (uint32_t i = 0; i < pods_.size(); i++) {
    Pod& p = pods_[i];
    if (!p.live || p.refs != 0 || p.last_seen + 1 >= gen_ || p.event_gen == gen_) continue;
    pod_index_.Erase(p.hash, i);
    p.live = false;
    p.uid.clear();
    p.name.clear();
    p.ns.clear();
    free_pods_.push_back(i);
  }
  return true;
}

bool RelistDiffer::PodInfo(std::string_view uid, std::string_view* name, std::string_view* ns) const {
  const uint32_t idx = pod_index_.Find(Hash(uid, kPodSeed), [&](uint32_t i) { return pods_[i].uid.view() == uid; });
  if (idx == HashIndex::kNone) return false;
  *name = pods_[idx].name;
  *ns = pods_[idx].ns;
  return true;
}

void RelistDiffer::KeepPrevious(std::string_view uid) {
  const uint32_t pod = pod_index_.Find(Hash(uid, kPodSeed), [&](uint32_t i) { return pods_[i].uid.view() == uid; });
  if (pod == HashIndex::kNone) return;
  // Changed and added records first (by index), then re-add removed ones: re-adding may reuse a
  // freed index, which must not be one an entry still refers to.
  for (Undo& u : undo_) {
    if (u.pod != pod || u.rec == HashIndex::kNone) continue;
    if (u.prev == kNonExistent) {
      EraseRec(u.rec);
    } else {
      recs_[u.rec].state = u.prev;
    }
    u.pod = HashIndex::kNone;
  }
  for (Undo& u : undo_) {
    if (u.pod != pod) continue;
    AddRec(pod, u.id, Hash(u.id, kIdSeed), u.prev, 0);
    u.pod = HashIndex::kNone;
  }
}

void RelistDiffer::Reset() {
  recs_.clear();
  recs_.shrink_to_fit();
  free_recs_.clear();
  rec_index_.Clear();
  live_recs_ = 0;
  pods_.clear();
  pods_.shrink_to_fit();
  free_pods_.clear();
  pod_index_.Clear();
  undo_.clear();
  events_.clear();
  sandboxes_.clear();
  containers_.clear();
  out_.clear();
  gen_++;
}

bool RelistDiffer::CheckInvariants(std::string* why) const {
  size_t live = 0;
  std::vector<uint32_t> refs(pods_.size(), 0);
  for (uint32_t i = 0; i < recs_.size(); i++) {
    const Rec& r = recs_[i];
    if (r.pod == HashIndex::kNone) continue;
    live++;
    if (r.pod >= pods_.size() || !pods_[r.pod].live) return *why = "record " + std::to_string(i) + " of a dead pod", false;
    refs[r.pod]++;
    if (r.uid() != pods_[r.pod].uid.view()) return *why = "record " + std::to_string(i) + " uid differs from its pod's", false;
    const uint64_t hash = Hash(r.id(), kIdSeed);
    const uint32_t found = rec_index_.Find(hash, [&](uint32_t j) { return recs_[j].id() == r.id() && recs_[j].pod == r.pod; });
    if (found != i) return *why = "record " + std::to_string(i) + " not found by key", false;
    if (r.state > kUnknown) return *why = "record " + std::to_string(i) + " has a bad state", false;
  }
  if (live != live_recs_ || live != rec_index_.size()) return *why = "record count mismatch", false;
  size_t live_pods = 0;
  for (uint32_t i = 0; i < pods_.size(); i++) {
    const Pod& p = pods_[i];
    if (!p.live) continue;
    live_pods++;
    const std::string uid(p.uid.view());
    if (p.refs != refs[i]) return *why = "pod " + uid + " refcount " + std::to_string(p.refs) + " != " + std::to_string(refs[i]), false;
    if (p.hash != Hash(uid, kPodSeed)) return *why = "pod " + uid + " hash is stale", false;
    if (pod_index_.Find(p.hash, [&](uint32_t j) { return pods_[j].uid.view() == p.uid.view(); }) != i) return *why = "pod " + uid + " not found", false;
  }
  if (live_pods != pod_index_.size()) return *why = "pod count mismatch", false;
  bool slots_ok = true;
  rec_index_.ForEach([&](uint32_t idx, uint32_t h32) {
    if (idx >= recs_.size() || recs_[idx].pod == HashIndex::kNone || static_cast<uint32_t>(Hash(recs_[idx].id(), kIdSeed)) != h32) slots_ok = false;
  });
  if (!slots_ok) return *why = "record index has a bad slot", false;
  return true;
}

uint64_t RelistDiffer::StateDigest() const {
  // Order-independent: sum of per-record and per-pod hashes.
  uint64_t sum = 0;
  for (const Rec& r : recs_) {
    if (r.pod == HashIndex::kNone) continue;
    sum += Fmix(Hash(r.id(), pods_[r.pod].hash) ^ (static_cast<uint64_t>(r.state) << 56));
  }
  for (const Pod& p : pods_) {
    if (!p.live) continue;
    sum += Fmix(Hash(p.name, Hash(p.ns, p.hash)) + p.last_seen * 0x100000001b3ULL);
  }
  return sum + live_recs_;
}

}  // namespace pleg
}  // namespace kts
