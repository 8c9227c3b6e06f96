// See pleg_decode.h. Two layers of fast path before the general one (pleg_wire.h):
// 1. Each message first walks its fields in the order runtimes write them (field number order,
//    as every protobuf serializer does), one expected tag per step, each of a common shape (a
//    one-byte tag, a one- or two-byte length, a varint of up to 9 bytes, a label entry that is
//    exactly "key, value"). A step whose field has another tag or shape consumes nothing, and the
//    walk never fails. Fields are always taken at the cursor, in order, so the result is the
//    general loop's: the walk only takes away the per-field dispatch, which was most of the
//    decode's instructions.
// 2. Whatever the walk leaves (fields out of order, unknown fields, other shapes) goes through
//    the per-field loop with the common shapes inline, and any other shape and every error
//    through the general path for that field, so results and errors are the reference decoders'.
#include "pleg_decode.h"

#include <algorithm>

#include "pleg_wire.h"

namespace kts {
namespace pleg {
namespace {

using wire::Field;
using wire::Labels;
using wire::Src;
using wire::Sv;

// A labels map entry whose payload is [s, e), when it is exactly "key, value" with one-byte
// lengths (as every runtime writes them); false, having read nothing, for any other shape.
[[gnu::always_inline]] inline bool LabelSimple(const uint8_t* b, size_t s, size_t e, Labels& l) {
  if (e - s >= 4 && b[s] == 0x0a) {
    const size_t klen = b[s + 1];
    if (klen < 0x80 && klen + 4 <= e - s && b[s + 2 + klen] == 0x12) {
      const size_t vlen = b[s + 3 + klen];
      if (vlen < 0x80 && s + 4 + klen + vlen == e) {
        wire::MatchLabel(Sv(b, s + 2, s + 2 + klen), Sv(b, s + 4 + klen, e), l);
        return true;
      }
    }
  }
  return false;
}

// A labels map entry whose payload is [s, e), of any shape.
[[gnu::always_inline]] inline bool LabelFast(Src src, size_t s, size_t e, Labels& l, const wire::Ctx& ctx) {
  if (LabelSimple(src.buf, s, e, l)) return true;
  Field entry;
  entry.start = s;
  entry.end = e;
  return wire::DecodeLabel(src, entry, l, ctx);
}

// The length of a wire type 2 field whose one-byte tag is at p (cend - p >= 3): sets *q to the
// payload start; false when the length takes more than two bytes or runs past cend.
[[gnu::always_inline]] inline bool LenFast(const uint8_t* b, size_t p, size_t cend, size_t* q, size_t* len) {
  size_t n = b[p + 1];
  size_t start = p + 2;
  if (n >= 0x80) {
    if (b[p + 2] >= 0x80) return false;
    n = (n & 0x7f) | (static_cast<size_t>(b[p + 2]) << 7);
    start = p + 3;
  }
  if (n > cend - start) return false;
  *q = start;
  *len = n;
  return true;
}

// The field at p (<= end) has the one-byte tag `tag` (wire type 2) and a one- or two-byte length
// that stays within end: sets [*q, *q + *len) to its payload.
[[gnu::always_inline]] inline bool LenAt(const uint8_t* b, size_t p, size_t end, uint32_t tag, size_t* q, size_t* len) {
  if (end - p < 2 || b[p] != tag) return false;
  size_t n = b[p + 1];
  size_t start = p + 2;
  if (n >= 0x80) {
    if (end - p < 3 || b[p + 2] >= 0x80) return false;
    n = (n & 0x7f) | (static_cast<size_t>(b[p + 2]) << 7);
    start = p + 3;
  }
  if (n > end - start) return false;
  *q = start;
  *len = n;
  return true;
}

// The position after a well-formed varint of at most 9 bytes at p, or 0 when it is longer,
// truncated or would read past end (the caller then leaves it to a slower path). Nine bytes: a
// nanosecond timestamp (created_at) takes 9. The terminating byte is found in one 8-byte word.
[[gnu::always_inline]] inline size_t VarintEnd9(const uint8_t* b, size_t p, size_t end) {
  if (end - p < 9) {
    for (size_t i = p; i < end && i < p + 9; i++)
      if (b[i] < 0x80) return i + 1;
    return 0;
  }
  const uint64_t stops = ~R8(reinterpret_cast<const char*>(b + p)) & 0x8080808080808080ULL;
  if (stops != 0) return p + static_cast<size_t>(__builtin_ctzll(stops) >> 3) + 1;  // little-endian
  return b[p + 8] < 0x80 ? p + 9 : 0;
}

// The position after a varint we skip (created_at) at p < end, or 0 when it is truncated or
// longer than 10 bytes (the general path then reports it).
[[gnu::always_inline]] inline size_t SkipVarint(const uint8_t* b, size_t p, size_t end) {
  const size_t q = VarintEnd9(b, p, end);
  if (q != 0) return q;
  return end - p >= 10 && b[p + 9] < 0x80 ? p + 10 : 0;
}

// Layer 1 for each message: the fields in the order runtimes write them, each step taking the
// field at the cursor when it has the step's tag and a common shape, else nothing. The walk never
// fails: what it leaves (other orders and shapes, malformed bytes) is the per-field loop's, which
// reports errors in order.
struct Walk {
  const uint8_t* b;
  size_t p, end;

  // Skips a field with this tag (wire type 2).
  [[gnu::always_inline]] void SkipLen(uint32_t tag) {
    size_t q, n;
    if (LenAt(b, p, end, tag, &q, &n)) p = q + n;
  }
  // Skips a run of fields with this tag (wire type 2): a map, one field per entry.
  [[gnu::always_inline]] void SkipLenRun(uint32_t tag) {
    size_t q, n;
    while (LenAt(b, p, end, tag, &q, &n)) p = q + n;
  }
  // Skips a field with this tag (wire type 0) of at most 9 bytes.
  [[gnu::always_inline]] void SkipVarint(uint32_t tag) {
    if (end - p >= 2 && b[p] == tag) {
      const size_t q = VarintEnd9(b, p + 1, end);
      if (q != 0) p = q;
    }
  }
  // A string field with this tag: sets *v.
  [[gnu::always_inline]] void Str(uint32_t tag, std::string_view* v) {
    size_t q, n;
    if (LenAt(b, p, end, tag, &q, &n)) {
      *v = Sv(b, q, q + n);
      p = q + n;
    }
  }
  // A one-byte enum value with this tag: sets *v.
  [[gnu::always_inline]] void Enum(uint32_t tag, uint32_t* v) {
    if (end - p >= 2 && b[p] == tag && b[p + 1] < 0x80) {
      *v = b[p + 1];
      p += 2;
    }
  }
  // The id (field 1, wire type 2) and its hash.
  template <class Msg>
  [[gnu::always_inline]] void Id(Msg& m) {
    const size_t at = p;
    Str(1 << 3 | 2, &m.id);
    if (p != at) m.id_hash = Hash(m.id, kIdSeed);
  }
  // A run of labels map entries with this tag, up to the first of another shape.
  [[gnu::always_inline]] void LabelRun(uint32_t tag, Labels& l) {
    size_t q, n;
    while (LenAt(b, p, end, tag, &q, &n) && LabelSimple(b, q, q + n, l)) p = q + n;
  }
  // Sandbox metadata (field 2: name 1, uid 2, namespace 3, attempt 4), taken only when all of
  // it is in that order and shape.
  [[gnu::always_inline]] void Metadata(wire::SandboxMsg& m) {
    size_t q, n;
    if (!LenAt(b, p, end, 2 << 3 | 2, &q, &n)) return;
    Walk meta{b, q, q + n};
    std::string_view name = m.meta_name, ns = m.meta_ns;  // repeated metadata merges
    meta.Str(1 << 3 | 2, &name);
    meta.SkipLen(2 << 3 | 2);
    meta.Str(3 << 3 | 2, &ns);
    meta.SkipVarint(4 << 3);
    if (meta.p != meta.end) return;
    m.meta_name = name;
    m.meta_ns = ns;
    p = meta.end;
  }
};

// runtime.v1.Container: id 1, pod_sandbox_id 2, metadata 3, image 4, image_ref 5, state 6,
// created_at 7, labels 8, annotations 9.
[[gnu::always_inline]] inline void WalkInOrder(Walk& w, wire::ContainerMsg& m) {
  w.Id(m);
  w.SkipLen(2 << 3 | 2);
  w.SkipLen(3 << 3 | 2);
  w.SkipLen(4 << 3 | 2);
  w.SkipLen(5 << 3 | 2);
  w.Enum(6 << 3, &m.state);
  w.SkipVarint(7 << 3);
  w.LabelRun(8 << 3 | 2, m.l);
  w.SkipLenRun(9 << 3 | 2);
}

// runtime.v1.PodSandbox: id 1, metadata 2, state 3 (absent when SANDBOX_READY), created_at 4,
// labels 5, annotations 6, runtime_handler 7.
[[gnu::always_inline]] inline void WalkInOrder(Walk& w, wire::SandboxMsg& m) {
  w.Id(m);
  w.Metadata(m);
  w.Enum(3 << 3, &m.state);
  w.SkipVarint(4 << 3);
  w.LabelRun(5 << 3 | 2, m.l);
  w.SkipLenRun(6 << 3 | 2);
  w.SkipLen(7 << 3 | 2);
}

// Layer 2: the fields of one message from p to mend, one at a time. The common shapes are
// inline: the id and labels (wire type 2), the state (wire type 0), and skipped fields of the
// usual shapes; the general path gets every other shape, the metadata, and a decoded field of
// the wrong wire type (an error).
template <class Msg>
[[gnu::always_inline]] inline bool FieldLoop(Src src, Msg& m, size_t p, size_t mend, const typename Msg::Where& where) {
  constexpr uint32_t kIdBytes = 1 << 3 | 2, kLabelsBytes = Msg::kLabels << 3 | 2, kStateVarint = Msg::kState << 3;
  const uint8_t* buf = src.buf;
  Field g;
  while (p < mend) {
    if (__builtin_expect(mend - p >= 3, 1)) {
      const uint32_t t = buf[p];
      // Not here: the state as bytes, the id and labels as varints (errors), and the metadata
      // (decoded by Apply()).
      if ((t & 7) == 2 && t >= 8 && t < 0x80 && t != (Msg::kState << 3 | 2) && t != (Msg::kMeta << 3 | 2)) {
        size_t q, n;
        if (LenFast(buf, p, mend, &q, &n)) {
          if (t == kIdBytes) {
            m.id = Sv(buf, q, q + n);
            m.id_hash = Hash(m.id, kIdSeed);
          } else if (t == kLabelsBytes) {
            if (!LabelFast(src, q, q + n, m.l, where.labels)) return false;
          }
          p = q + n;
          continue;
        }
      } else if ((t & 7) == 0 && t >= 8 && t < 0x80 && t != (1 << 3) && t != (Msg::kLabels << 3) && t != (Msg::kMeta << 3)) {
        if (buf[p + 1] < 0x80) {
          if (t == kStateVarint) m.state = buf[p + 1];
          p += 2;
          continue;
        }
        if (t != kStateVarint) {  // a longer varint we skip: find its last byte
          const size_t q = SkipVarint(buf, p + 1, mend);
          if (q != 0) {
            p = q;
            continue;
          }
        }
      }
    }
    if (!wire::Next(src, p, mend, g, where.ctx) || !m.Apply(src, g, where)) return false;
  }
  return true;
}

// One List*Response of Msg (pleg_wire.h); End(out...) appends each item.
template <class Msg, class... Out>
bool DecodeList(const uint8_t* buf, size_t len, std::string* error, Out... out) {
  if (len == 0) return true;
  const Src src{buf, error};
  typename Msg::Where where;
  const uint64_t empty_hash = Hash(std::string_view(), kIdSeed);
  size_t pos = 0;
  Field f;
  size_t index = 0;
  while (pos < len) {
    if (!wire::Next(src, pos, len, f, where.top)) return false;
    if (f.num != 1) continue;
    if (!wire::Expect(src, f, 2, where.top)) return false;
    where.At(index++);
    Msg m(empty_hash);
    Walk w{buf, f.start, f.end};
    WalkInOrder(w, m);
    if (!FieldLoop(src, m, w.p, f.end, where)) return false;
    m.End(out...);
  }
  return true;
}

}  // namespace

bool DecodeContainersFast(const uint8_t* buf, size_t len, std::vector<Item>* out, uint32_t counts[4], std::string* error) {
  return DecodeList<wire::ContainerMsg>(len ? buf : wire::kEmpty, len, error, out, counts);
}

bool DecodeSandboxesFast(const uint8_t* buf, size_t len, std::vector<Item>* out, std::string* error) {
  return DecodeList<wire::SandboxMsg>(len ? buf : wire::kEmpty, len, error, out);
}

}  // namespace pleg
}  // namespace kts
