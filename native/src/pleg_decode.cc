// See pleg_decode.h. The common shapes handled inline: a one-byte tag, a one- or two-byte length,
// a one-byte varint, a map entry that is exactly "key, value". Any other shape, and every error,
// goes through the general path for that field (pleg_wire.h), so results and errors are those of
// the reference decoders.
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

// A labels map entry whose payload is [s, e).
[[gnu::always_inline]] inline bool LabelFast(Src src, size_t s, size_t e, Labels& l, const wire::Ctx& ctx) {
  const uint8_t* b = src.buf;
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

// The position after a well-formed varint starting at p (< end), or 0 when it is truncated or
// longer than 10 bytes (the general path then reports it).
[[gnu::always_inline]] inline size_t SkipVarint(const uint8_t* b, size_t p, size_t end) {
  const size_t last = std::min(end, p + 10);
  for (size_t i = p; i < last; i++)
    if (b[i] < 0x80) return i + 1;
  return 0;
}

// One List*Response of Msg (pleg_wire.h); End(out...) appends each item. The fast path takes the
// id and labels (wire type 2) and the state (wire type 0), and skips other fields of the usual
// shapes; the general path gets every other shape, the metadata, and a decoded field of the
// wrong wire type (an error).
template <class Msg, class... Out>
bool DecodeList(const uint8_t* buf, size_t len, std::string* error, Out... out) {
  constexpr uint32_t kIdBytes = 1 << 3 | 2, kLabelsBytes = Msg::kLabels << 3 | 2, kStateVarint = Msg::kState << 3;
  if (len == 0) return true;
  const Src src{buf, error};
  typename Msg::Where where;
  const uint64_t empty_hash = Hash(std::string_view(), kIdSeed);
  size_t pos = 0;
  Field f, g;
  size_t index = 0;
  while (pos < len) {
    if (!wire::Next(src, pos, len, f, where.top)) return false;
    if (f.num != 1) continue;
    if (!wire::Expect(src, f, 2, where.top)) return false;
    where.At(index++);
    Msg m(empty_hash);
    size_t p = f.start;
    const size_t mend = f.end;
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
            } else {
              // A skipped field repeats in a run (the annotations map: one field per entry): hop
              // over the run's short entries here, without the dispatch above per entry.
              p = q + n;
              while (mend - p >= 2 && buf[p] == t && buf[p + 1] < 0x80 && buf[p + 1] <= mend - p - 2) p += 2 + buf[p + 1];
              continue;
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
          if (t != kStateVarint) {  // a longer varint we skip (created_at): find its last byte
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
