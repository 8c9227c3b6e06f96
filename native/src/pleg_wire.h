// PLEG relist skim decoding, the general path: the protobuf field reader (proto3 wire rules and
// the error messages of pleg.h) and, per CRI message, how one field read that way is applied
// (SandboxMsg, ContainerMsg). Shared by the fast decoders (pleg_decode.cc), which fall back to
// it for every shape they do not inline and for every error, and the fuzz target's reference
// decoders (native/fuzz/pleg_reference_decoder.cc), which read every field this way.
//
// The hot parts are inline and allocation-free; building an error message is out of line.
// The decoder's state is passed by value and the cursor/field by reference into always-inline
// code, so that they live in registers: the parse is a chain of dependent loads and every round
// trip through memory would lengthen it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pleg_decode.h"
#include "pleg_hash.h"

namespace kts {
namespace pleg {
namespace wire {

constexpr std::string_view kPodUidLabel = "io.kubernetes.pod.uid";
constexpr std::string_view kPodNameLabel = "io.kubernetes.pod.name";
constexpr std::string_view kPodNamespaceLabel = "io.kubernetes.pod.namespace";
constexpr std::string_view kContainerNameLabel = "io.kubernetes.container.name";

// Where in the reply we are, for error messages: "<top>[ <list>[<index>][.<sub>]]".
struct Ctx {
  const char* top;
  const char* list = nullptr;
  size_t index = 0;
  const char* sub = nullptr;
};

struct Field {
  uint32_t num = 0;
  uint32_t wt = 0;
  uint64_t value = 0;         // wire type 0
  size_t start = 0, end = 0;  // wire type 2: the payload
  size_t at = 0;              // offset of the tag
};

enum Problem {
  kTagTruncated,
  kTagTooLong,
  kTagRange,
  kFieldZero,
  kValueTruncated,
  kValueTooLong,
  kFixed64Truncated,
  kLengthTruncated,
  kLengthTooLong,
  kPastEnd,
  kFixed32Truncated,
  kGroup,
  kBadWireType,
  kWrongWireType,
};

// Sets *error to "<where>: [field N: ]<problem> at byte <at>" and returns false.
[[gnu::cold]] [[gnu::noinline]] bool Fail(std::string* error, const Ctx& ctx, size_t at, Problem what, uint64_t num, uint64_t a,
                                          uint64_t b);

// The general field reader: every shape, every error. *pos is at a field (< end).
[[gnu::noinline]] bool NextSlow(const uint8_t* buf, std::string* error, size_t* pos, size_t end, Field* f, const Ctx& ctx);

// A non-null pointer for an empty reply (the decoders never read it).
extern const uint8_t kEmpty[1];

struct Src {
  const uint8_t* buf;
  std::string* error;
};

// Reads the field at pos (< end). False (error set) on malformed bytes.
[[gnu::always_inline]] inline bool Next(Src src, size_t& pos, size_t end, Field& f, const Ctx& ctx) {
  // Fast path, the shape of nearly every field: a one-byte tag with field number >= 1 and then a
  // one- or two-byte length (wire type 2) or a one-byte varint (wire type 0). Anything else,
  // including every error, takes the general path from the start of the field.
  const size_t p = pos;
  if (__builtin_expect(end - p >= 3, 1)) {
    const uint8_t* b = src.buf + p;
    const uint32_t tag = b[0];
    if (__builtin_expect(tag < 0x80 && tag >= 8, 1)) {
      if ((tag & 7) == 2) {
        size_t len = b[1], q = p + 2;
        if (len >= 0x80) {
          len = (len & 0x7f) | (static_cast<size_t>(b[2]) << 7);
          q = p + 3;
          if (b[2] >= 0x80) q = end + 1;  // longer length: general path
        }
        if (__builtin_expect(q <= end && len <= end - q, 1)) {
          f.at = p;
          f.num = tag >> 3;
          f.wt = 2;
          f.start = q;
          f.end = pos = q + len;
          return true;
        }
      } else if ((tag & 7) == 0 && b[1] < 0x80) {
        f.at = p;
        f.num = tag >> 3;
        f.wt = 0;
        f.value = b[1];
        pos = p + 2;
        return true;
      }
    }
  }
  Field tmp;
  size_t q = p;
  if (!NextSlow(src.buf, src.error, &q, end, &tmp, ctx)) return false;
  f = tmp;
  pos = q;
  return true;
}

[[gnu::always_inline]] inline bool Expect(Src src, const Field& f, uint32_t wt, const Ctx& ctx) {
  if (__builtin_expect(f.wt == wt, 1)) return true;
  return Fail(src.error, ctx, f.at, kWrongWireType, f.num, f.wt, wt);
}

inline std::string_view Sv(const uint8_t* buf, size_t start, size_t end) {
  return std::string_view(reinterpret_cast<const char*>(buf) + start, end - start);
}

inline std::string_view View(Src src, const Field& f) { return Sv(src.buf, f.start, f.end); }

struct Labels {
  std::string_view uid, name, ns, container;
};

// a.size() == lit.size() >= 16 (our label keys): the last 8 bytes first (where they differ),
// then the rest in 8-byte words, without a libc call.
[[gnu::always_inline]] inline bool Eq(std::string_view a, std::string_view lit) {
  const size_t n = lit.size();
  if (R8(a.data() + n - 8) != R8(lit.data() + n - 8)) return false;
  for (size_t i = 0; i + 8 < n; i += 8)
    if (R8(a.data() + i) != R8(lit.data() + i)) return false;
  return true;
}

// Keeps a label entry if it is one we need. Dispatch on the length first: most labels are none
// of ours.
[[gnu::always_inline]] inline void MatchLabel(std::string_view key, std::string_view value, Labels& l) {
  switch (key.size()) {
    case kPodUidLabel.size(): if (Eq(key, kPodUidLabel)) l.uid = value; break;
    case kPodNameLabel.size(): if (Eq(key, kPodNameLabel)) l.name = value; break;
    case kPodNamespaceLabel.size(): if (Eq(key, kPodNamespaceLabel)) l.ns = value; break;
    case kContainerNameLabel.size(): if (Eq(key, kContainerNameLabel)) l.container = value; break;
    default: break;
  }
}

// One map<string,string> entry (key = 1, value = 2); keeps the labels we need.
[[gnu::always_inline]] inline bool DecodeLabel(Src src, const Field& entry, Labels& l, const Ctx& ctx) {
  std::string_view key, value;
  size_t pos = entry.start;
  Field f;
  while (pos < entry.end) {
    if (!Next(src, pos, entry.end, f, ctx)) return false;
    if (f.num == 1 || f.num == 2) {
      if (!Expect(src, f, 2, ctx)) return false;
      (f.num == 1 ? key : value) = View(src, f);
    }
  }
  MatchLabel(key, value, l);
  return true;
}

// ---- the CRI messages -------------------------------------------------------------------------
// Per message: a fresh ContainerMsg/SandboxMsg, Apply() for each of its fields read with Next(),
// End() to append the item if it is ours. The fast decoders set the same members directly, by
// the field numbers given here (kState, kLabels, kMeta). The error contexts are kept apart
// (*Where) so that the message's members can live in registers.

// What both messages carry: id = 1, a state enum (kState) and the labels map (kLabels).
template <uint32_t kStateField, uint32_t kLabelsField>
struct MsgFields {
  static constexpr uint32_t kState = kStateField, kLabels = kLabelsField;
  std::string_view id;
  uint64_t id_hash;
  uint32_t state = 0;
  Labels l;

  explicit MsgFields(uint64_t empty_hash) : id_hash(empty_hash) {}
  // Field g if it is the id, the state or a label; other fields are skipped.
  [[gnu::always_inline]] bool ApplyCommon(Src src, const Field& g, const Ctx& ctx, const Ctx& labels_ctx) {
    switch (g.num) {
      case 1:
        if (!Expect(src, g, 2, ctx)) return false;
        id = View(src, g);
        id_hash = Hash(id, kIdSeed);  // while the bytes are in the cache
        break;
      case kState:
        if (!Expect(src, g, 0, ctx)) return false;
        state = static_cast<uint32_t>(g.value);
        break;
      case kLabels:
        if (!Expect(src, g, 2, ctx)) return false;
        if (!DecodeLabel(src, g, l, labels_ctx)) return false;
        break;
      default:
        break;
    }
    return true;
  }
  [[gnu::always_inline]] void Append(std::vector<Item>* out, std::string_view name, std::string_view ns, uint8_t item_state,
                                     uint8_t cri_state) const {
    // Built here and pushed: push_back's common case inlines, emplace_back's did not.
    Item item;
    item.id = id;
    item.hash = id_hash;
    item.uid = l.uid;
    item.name = name;
    item.ns = ns;
    item.state = item_state;
    item.cri_state = cri_state;
    item.pod = HashIndex::kNone;
    out->push_back(item);
  }
};

// Where a ListContainersResponse's errors are.
struct ContainerWhere {
  Ctx top{"ListContainersResponse"};
  Ctx ctx{"ListContainersResponse", "containers"};
  Ctx labels{"ListContainersResponse", "containers", 0, "labels"};
  void At(size_t index) { ctx.index = labels.index = index; }
};

// runtime.v1.Container: id = 1, state = 6, labels = 8.
struct ContainerMsg : MsgFields<6, 8> {
  using Where = ContainerWhere;
  static constexpr uint32_t kMeta = 0;  // none read
  using MsgFields::MsgFields;

  [[gnu::always_inline]] bool Apply(Src src, const Field& g, const Where& w) { return ApplyCommon(src, g, w.ctx, w.labels); }
  // A labelled container: counted by CRI state and appended.
  [[gnu::always_inline]] void End(std::vector<Item>* out, uint32_t counts[4]) const {
    if (l.uid.empty() || l.container.empty()) return;  // not ours
    const uint32_t cri = state <= 3 ? state : 3;
    counts[cri]++;
    Append(out, l.name, l.ns, state == 1 ? kRunning : state == 2 ? kExited : kUnknown, static_cast<uint8_t>(cri));
  }
};

// Where a ListPodSandboxResponse's errors are.
struct SandboxWhere {
  Ctx top{"ListPodSandboxResponse"};
  Ctx ctx{"ListPodSandboxResponse", "items"};
  Ctx labels{"ListPodSandboxResponse", "items", 0, "labels"};
  Ctx meta{"ListPodSandboxResponse", "items", 0, "metadata"};
  void At(size_t index) { ctx.index = labels.index = meta.index = index; }
};

// runtime.v1.PodSandbox: id = 1, metadata = 2 (name = 1, namespace = 3), state = 3, labels = 5.
struct SandboxMsg : MsgFields<3, 5> {
  using Where = SandboxWhere;
  static constexpr uint32_t kMeta = 2;
  using MsgFields::MsgFields;
  std::string_view meta_name, meta_ns;

  [[gnu::always_inline]] bool Apply(Src src, const Field& g, const Where& w) {
    if (g.num != kMeta) return ApplyCommon(src, g, w.ctx, w.labels);
    // Metadata: repeated occurrences merge.
    if (!Expect(src, g, 2, w.ctx)) return false;
    size_t q = g.start;
    Field h;
    while (q < g.end) {
      if (!Next(src, q, g.end, h, w.meta)) return false;
      if (h.num == 1 || h.num == 3) {
        if (!Expect(src, h, 2, w.meta)) return false;
        (h.num == 1 ? meta_name : meta_ns) = View(src, h);
      }
    }
    return true;
  }
  // A labelled sandbox: appended, named by its metadata or else its labels.
  [[gnu::always_inline]] void End(std::vector<Item>* out) const {
    if (l.uid.empty()) return;  // not ours
    Append(out, meta_name.empty() ? l.name : meta_name, meta_ns.empty() ? l.ns : meta_ns, state == 0 ? kRunning : kExited,
           static_cast<uint8_t>(state == 0 ? 0 : 1));
  }
};

}  // namespace wire
}  // namespace pleg
}  // namespace kts
