#include "pleg.h"

#include <algorithm>
#include <cstring>

namespace kts {
namespace pleg {
namespace {

constexpr std::string_view kPodUidLabel = "io.kubernetes.pod.uid";
constexpr std::string_view kPodNameLabel = "io.kubernetes.pod.name";
constexpr std::string_view kPodNamespaceLabel = "io.kubernetes.pod.namespace";
constexpr std::string_view kContainerNameLabel = "io.kubernetes.container.name";

// ---- hashing ----------------------------------------------------------------------------------
// wyhash-style: 64x64->128 multiply-fold mixing, 16 bytes per round. Not for adversaries; a
// collision only costs a probe.

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

// ---- skim decoder -----------------------------------------------------------------------------
// The hot path is inline and allocation-free; building an error message is out of line.

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

[[gnu::cold]] [[gnu::noinline]] bool Fail(std::string* error, const Ctx& ctx, size_t at, Problem what, uint64_t num, uint64_t a,
                                          uint64_t b) {
  std::string m = ctx.top;
  if (ctx.list != nullptr) {
    m += ' ';
    m += ctx.list;
    m += '[';
    m += std::to_string(ctx.index);
    m += ']';
    if (ctx.sub != nullptr) {
      m += '.';
      m += ctx.sub;
    }
  }
  m += ": ";
  if (what >= kValueTruncated) m += "field " + std::to_string(num) + ": ";
  switch (what) {
    case kTagTruncated: m += "truncated varint"; break;
    case kTagTooLong: m += "varint longer than 10 bytes"; break;
    case kTagRange: m += "tag " + std::to_string(a) + " out of range"; break;
    case kFieldZero: m += "field number 0"; break;
    case kValueTruncated: m += "truncated varint"; break;
    case kValueTooLong: m += "varint longer than 10 bytes"; break;
    case kFixed64Truncated: m += "truncated fixed64"; break;
    case kLengthTruncated: m += "truncated length"; break;
    case kLengthTooLong: m += "length varint longer than 10 bytes"; break;
    case kPastEnd: m += "length " + std::to_string(a) + " past end (" + std::to_string(b) + " bytes left)"; break;
    case kFixed32Truncated: m += "truncated fixed32"; break;
    case kGroup: m += "group wire type " + std::to_string(a) + " not supported"; break;
    case kBadWireType: m += "invalid wire type " + std::to_string(a); break;
    case kWrongWireType: m += "wire type " + std::to_string(a) + ", expected " + std::to_string(b); break;
  }
  m += " at byte ";
  m += std::to_string(at);
  *error = std::move(m);
  return false;
}

// 0 ok, 1 truncated, 2 longer than 10 bytes. Values wrap at 2^64 (bits past 64 are dropped).
[[gnu::noinline]] int VarintSlow(const uint8_t* buf, size_t* pos, size_t end, uint64_t* out) {
  uint64_t v = 0;
  size_t p = *pos;
  for (int i = 0; i < 10; i++) {
    if (p >= end) return 1;
    const uint8_t b = buf[p++];
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      *pos = p;
      *out = v;
      return 0;
    }
  }
  return 2;
}

[[gnu::always_inline]] inline int Varint(const uint8_t* buf, size_t* pos, size_t end, uint64_t* out) {
  size_t p = *pos;
  if (p < end && buf[p] < 0x80) {
    *out = buf[p];
    *pos = p + 1;
    return 0;
  }
  if (end - p >= 2 && buf[p + 1] < 0x80) {
    *out = (buf[p] & 0x7fu) | (static_cast<uint64_t>(buf[p + 1]) << 7);
    *pos = p + 2;
    return 0;
  }
  return VarintSlow(buf, pos, end, out);
}

// The general field reader: every shape, every error. *pos is at a field (< end).
[[gnu::noinline]] bool NextSlow(const uint8_t* buf, std::string* error, size_t* pos, size_t end, Field* f, const Ctx& ctx) {
  f->at = *pos;
  uint64_t tag;
  int r = Varint(buf, pos, end, &tag);
  if (r != 0) return Fail(error, ctx, f->at, r == 1 ? kTagTruncated : kTagTooLong, 0, 0, 0);
  if (tag > 0xffffffffULL) return Fail(error, ctx, f->at, kTagRange, 0, tag, 0);
  f->num = static_cast<uint32_t>(tag >> 3);
  f->wt = static_cast<uint32_t>(tag & 7);
  if (f->num == 0) return Fail(error, ctx, f->at, kFieldZero, 0, 0, 0);
  const uint32_t wt = f->wt;
  if (wt == 2) {
    uint64_t len;
    r = Varint(buf, pos, end, &len);
    if (r != 0) return Fail(error, ctx, f->at, r == 1 ? kLengthTruncated : kLengthTooLong, f->num, 0, 0);
    const size_t left = end - *pos;
    if (len > left) return Fail(error, ctx, f->at, kPastEnd, f->num, len, left);
    f->start = *pos;
    f->end = *pos + static_cast<size_t>(len);
    *pos = f->end;
    return true;
  }
  if (wt == 0) {
    r = Varint(buf, pos, end, &f->value);
    if (r != 0) return Fail(error, ctx, f->at, r == 1 ? kValueTruncated : kValueTooLong, f->num, 0, 0);
    return true;
  }
  if (wt == 1) {
    if (end - *pos < 8) return Fail(error, ctx, f->at, kFixed64Truncated, f->num, 0, 0);
    *pos += 8;
    return true;
  }
  if (wt == 5) {
    if (end - *pos < 4) return Fail(error, ctx, f->at, kFixed32Truncated, f->num, 0, 0);
    *pos += 4;
    return true;
  }
  if (wt == 3 || wt == 4) return Fail(error, ctx, f->at, kGroup, f->num, wt, 0);
  return Fail(error, ctx, f->at, kBadWireType, f->num, wt, 0);
}

// The decoder's state is passed by value and the cursor/field by reference into always-inline
// code, so that they live in registers: the parse is a chain of dependent loads and every
// round trip through memory would lengthen it.
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

inline std::string_view View(Src src, const Field& f) {
  return std::string_view(reinterpret_cast<const char*>(src.buf) + f.start, f.end - f.start);
}

struct Labels {
  std::string_view uid, name, ns, container;
};

// a.size() == lit.size() >= 16 (our label keys): the last 8 bytes first (where they differ),
// then the rest in 8-byte words, without a libc call.
inline bool Eq(std::string_view a, std::string_view lit) {
  const size_t n = lit.size();
  if (R8(a.data() + n - 8) != R8(lit.data() + n - 8)) return false;
  for (size_t i = 0; i + 8 < n; i += 8)
    if (R8(a.data() + i) != R8(lit.data() + i)) return false;
  return true;
}

// Equality of two byte ranges of length n, in 8-byte words.
inline bool SameBytes(const char* a, const char* b, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    if (R8(a + i) != R8(b + i)) return false;
  for (; i < n; i++)
    if (a[i] != b[i]) return false;
  return true;
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
  // Dispatch on the length first: most labels are none of ours.
  switch (key.size()) {
    case kPodUidLabel.size():
      if (Eq(key, kPodUidLabel)) l.uid = value;
      break;
    case kPodNameLabel.size():
      if (Eq(key, kPodNameLabel)) l.name = value;
      break;
    case kPodNamespaceLabel.size():
      if (Eq(key, kPodNamespaceLabel)) l.ns = value;
      break;
    case kContainerNameLabel.size():
      if (Eq(key, kContainerNameLabel)) l.container = value;
      break;
    default:
      break;
  }
  return true;
}

const uint8_t kEmpty[1] = {0};
constexpr size_t kPrefetchAhead = 2048;

bool DecodeContainersRef(const uint8_t* buf, size_t len, std::vector<Item>* out, uint32_t counts[4], std::string* error) {
  if (len == 0) return true;
  const Src src{buf, error};
  Ctx top{"ListContainersResponse"};
  Ctx ctx{"ListContainersResponse", "containers"};
  Ctx labels_ctx{"ListContainersResponse", "containers", 0, "labels"};
  size_t pos = 0;
  Field f, g;
  size_t index = 0;
  size_t fetched = 0;  // prefetched up to here
  while (pos < len) {
    // Parsing is a chain of dependent loads: keep the next containers on their way to the cache.
    for (const size_t ahead = std::min(len, pos + kPrefetchAhead); fetched < ahead; fetched += 64) __builtin_prefetch(buf + fetched);
    if (!Next(src, pos, len, f, top)) return false;
    if (f.num != 1) continue;
    if (!Expect(src, f, 2, top)) return false;
    ctx.index = labels_ctx.index = index++;
    std::string_view id;
    uint64_t id_hash = Hash(id, kIdSeed);
    uint32_t state = 0;
    Labels l;
    size_t p = f.start;
    const size_t cend = f.end;
    while (p < cend) {
      if (!Next(src, p, cend, g, ctx)) return false;
      switch (g.num) {
        case 1:
          if (!Expect(src, g, 2, ctx)) return false;
          id = View(src, g);
          id_hash = Hash(id, kIdSeed);  // while the bytes are in the cache
          break;
        case 6:
          if (!Expect(src, g, 0, ctx)) return false;
          state = static_cast<uint32_t>(g.value);
          break;
        case 8:
          if (!Expect(src, g, 2, ctx)) return false;
          if (!DecodeLabel(src, g, l, labels_ctx)) return false;
          break;
        default:
          break;
      }
    }
    if (l.uid.empty() || l.container.empty()) continue;  // not ours
    const uint32_t cri = state <= 3 ? state : 3;
    counts[cri]++;
    Item& item = out->emplace_back();
    item.id = id;
    item.hash = id_hash;
    item.uid = l.uid;
    item.name = l.name;
    item.ns = l.ns;
    item.state = state == 1 ? kRunning : state == 2 ? kExited : kUnknown;
    item.cri_state = static_cast<uint8_t>(cri);
    item.pod = HashIndex::kNone;
    item.rec = HashIndex::kNone;
  }
  return true;
}

bool DecodeSandboxesRef(const uint8_t* buf, size_t len, std::vector<Item>* out, std::string* error) {
  if (len == 0) return true;
  const Src src{buf, error};
  Ctx top{"ListPodSandboxResponse"};
  Ctx ctx{"ListPodSandboxResponse", "items"};
  Ctx labels_ctx{"ListPodSandboxResponse", "items", 0, "labels"};
  Ctx meta_ctx{"ListPodSandboxResponse", "items", 0, "metadata"};
  size_t pos = 0;
  Field f, g, h;
  size_t index = 0;
  size_t fetched = 0;
  while (pos < len) {
    for (const size_t ahead = std::min(len, pos + kPrefetchAhead); fetched < ahead; fetched += 64) __builtin_prefetch(buf + fetched);
    if (!Next(src, pos, len, f, top)) return false;
    if (f.num != 1) continue;
    if (!Expect(src, f, 2, top)) return false;
    ctx.index = labels_ctx.index = meta_ctx.index = index++;
    std::string_view id, meta_name, meta_ns;
    uint64_t id_hash = Hash(id, kIdSeed);
    uint32_t state = 0;
    Labels l;
    size_t p = f.start;
    const size_t send = f.end;
    while (p < send) {
      if (!Next(src, p, send, g, ctx)) return false;
      switch (g.num) {
        case 1:
          if (!Expect(src, g, 2, ctx)) return false;
          id = View(src, g);
          id_hash = Hash(id, kIdSeed);  // while the bytes are in the cache
          break;
        case 2: {  // metadata: repeated occurrences merge
          if (!Expect(src, g, 2, ctx)) return false;
          size_t q = g.start;
          while (q < g.end) {
            if (!Next(src, q, g.end, h, meta_ctx)) return false;
            if (h.num == 1 || h.num == 3) {
              if (!Expect(src, h, 2, meta_ctx)) return false;
              (h.num == 1 ? meta_name : meta_ns) = View(src, h);
            }
          }
          break;
        }
        case 3:
          if (!Expect(src, g, 0, ctx)) return false;
          state = static_cast<uint32_t>(g.value);
          break;
        case 5:
          if (!Expect(src, g, 2, ctx)) return false;
          if (!DecodeLabel(src, g, l, labels_ctx)) return false;
          break;
        default:
          break;
      }
    }
    if (l.uid.empty()) continue;  // not ours
    Item& item = out->emplace_back();
    item.id = id;
    item.hash = id_hash;
    item.uid = l.uid;
    item.name = meta_name.empty() ? l.name : meta_name;
    item.ns = meta_ns.empty() ? l.ns : meta_ns;
    item.state = state == 0 ? kRunning : kExited;
    item.cri_state = static_cast<uint8_t>(state == 0 ? 0 : 1);
    item.pod = HashIndex::kNone;
    item.rec = HashIndex::kNone;
  }
  return true;
}

// ---- fast decoders ----------------------------------------------------------------------------
// What Diff() uses. Same results and errors as the reference decoders above (the fuzz target
// checks it), with the common shapes handled inline: a one-byte tag, a one- or two-byte length,
// a one-byte varint, a map entry that is exactly "key, value". Any other shape, and every error,
// goes through the reference code for that field.

inline std::string_view Sv(const uint8_t* buf, size_t start, size_t end) {
  return std::string_view(reinterpret_cast<const char*>(buf) + start, end - start);
}

[[gnu::always_inline]] inline void MatchLabel(std::string_view key, std::string_view value, Labels& l) {
  switch (key.size()) {
    case kPodUidLabel.size():
      if (Eq(key, kPodUidLabel)) l.uid = value;
      break;
    case kPodNameLabel.size():
      if (Eq(key, kPodNameLabel)) l.name = value;
      break;
    case kPodNamespaceLabel.size():
      if (Eq(key, kPodNamespaceLabel)) l.ns = value;
      break;
    case kContainerNameLabel.size():
      if (Eq(key, kContainerNameLabel)) l.container = value;
      break;
    default:
      break;
  }
}

// A labels map entry whose payload is [s, e).
[[gnu::always_inline]] inline bool LabelFast(Src src, size_t s, size_t e, Labels& l, const Ctx& ctx) {
  const uint8_t* b = src.buf;
  if (e - s >= 4 && b[s] == 0x0a) {
    const size_t klen = b[s + 1];
    if (klen < 0x80 && klen + 4 <= e - s && b[s + 2 + klen] == 0x12) {
      const size_t vlen = b[s + 3 + klen];
      if (vlen < 0x80 && s + 4 + klen + vlen == e) {
        MatchLabel(Sv(b, s + 2, s + 2 + klen), Sv(b, s + 4 + klen, e), l);
        return true;
      }
    }
  }
  Field entry;
  entry.start = s;
  entry.end = e;
  return DecodeLabel(src, entry, l, ctx);
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

bool DecodeContainersFastImpl(const uint8_t* buf, size_t len, std::vector<Item>* out, uint32_t counts[4], std::string* error) {
  if (len == 0) return true;
  const Src src{buf, error};
  Ctx top{"ListContainersResponse"};
  Ctx ctx{"ListContainersResponse", "containers"};
  Ctx labels_ctx{"ListContainersResponse", "containers", 0, "labels"};
  const uint64_t empty_hash = Hash(std::string_view(), kIdSeed);
  size_t pos = 0;
  Field f, g;
  size_t index = 0;
  while (pos < len) {
    if (!Next(src, pos, len, f, top)) return false;
    if (f.num != 1) continue;
    if (!Expect(src, f, 2, top)) return false;
    ctx.index = labels_ctx.index = index++;
    std::string_view id;
    uint64_t id_hash = empty_hash;
    uint32_t state = 0;
    Labels l;
    size_t p = f.start;
    const size_t cend = f.end;
    while (p < cend) {
      if (__builtin_expect(cend - p >= 3, 1)) {
        const uint32_t t = buf[p];
        if ((t & 7) == 2 && t >= 8 && t < 0x80 && t != 0x32) {  // 0x32: state as bytes, an error
          size_t q, n;
          if (LenFast(buf, p, cend, &q, &n)) {
            if (t == 0x0a) {
              id = Sv(buf, q, q + n);
              id_hash = Hash(id, kIdSeed);
            } else if (t == 0x42) {
              if (!LabelFast(src, q, q + n, l, labels_ctx)) return false;
            }
            p = q + n;
            continue;
          }
        } else if ((t & 7) == 0 && t >= 8 && t < 0x80 && t != 0x08 && t != 0x40) {  // id, labels: errors
          if (buf[p + 1] < 0x80) {
            if (t == 0x30) state = buf[p + 1];
            p += 2;
            continue;
          }
          if (t != 0x30) {  // a longer varint we skip (created_at): find its last byte
            const size_t q = SkipVarint(buf, p + 1, cend);
            if (q != 0) {
              p = q;
              continue;
            }
          }
        }
      }
      if (!Next(src, p, cend, g, ctx)) return false;
      switch (g.num) {
        case 1:
          if (!Expect(src, g, 2, ctx)) return false;
          id = View(src, g);
          id_hash = Hash(id, kIdSeed);
          break;
        case 6:
          if (!Expect(src, g, 0, ctx)) return false;
          state = static_cast<uint32_t>(g.value);
          break;
        case 8:
          if (!Expect(src, g, 2, ctx)) return false;
          if (!DecodeLabel(src, g, l, labels_ctx)) return false;
          break;
        default:
          break;
      }
    }
    if (l.uid.empty() || l.container.empty()) continue;  // not ours
    const uint32_t cri = state <= 3 ? state : 3;
    counts[cri]++;
    Item& item = out->emplace_back();
    item.id = id;
    item.hash = id_hash;
    item.uid = l.uid;
    item.name = l.name;
    item.ns = l.ns;
    item.state = state == 1 ? kRunning : state == 2 ? kExited : kUnknown;
    item.cri_state = static_cast<uint8_t>(cri);
    item.pod = HashIndex::kNone;
    item.rec = HashIndex::kNone;
  }
  return true;
}

bool DecodeSandboxesFastImpl(const uint8_t* buf, size_t len, std::vector<Item>* out, std::string* error) {
  if (len == 0) return true;
  const Src src{buf, error};
  Ctx top{"ListPodSandboxResponse"};
  Ctx ctx{"ListPodSandboxResponse", "items"};
  Ctx labels_ctx{"ListPodSandboxResponse", "items", 0, "labels"};
  Ctx meta_ctx{"ListPodSandboxResponse", "items", 0, "metadata"};
  const uint64_t empty_hash = Hash(std::string_view(), kIdSeed);
  size_t pos = 0;
  Field f, g, h;
  size_t index = 0;
  while (pos < len) {
    if (!Next(src, pos, len, f, top)) return false;
    if (f.num != 1) continue;
    if (!Expect(src, f, 2, top)) return false;
    ctx.index = labels_ctx.index = meta_ctx.index = index++;
    std::string_view id, meta_name, meta_ns;
    uint64_t id_hash = empty_hash;
    uint32_t state = 0;
    Labels l;
    size_t p = f.start;
    const size_t send = f.end;
    while (p < send) {
      if (__builtin_expect(send - p >= 3, 1)) {
        const uint32_t t = buf[p];
        // Not here: metadata (0x12, decoded below), state as bytes (0x1a), and the decoded
        // fields as varints (0x08, 0x10, 0x28).
        if ((t & 7) == 2 && t >= 8 && t < 0x80 && t != 0x12 && t != 0x1a) {
          size_t q, n;
          if (LenFast(buf, p, send, &q, &n)) {
            if (t == 0x0a) {
              id = Sv(buf, q, q + n);
              id_hash = Hash(id, kIdSeed);
            } else if (t == 0x2a) {
              if (!LabelFast(src, q, q + n, l, labels_ctx)) return false;
            }
            p = q + n;
            continue;
          }
        } else if ((t & 7) == 0 && t >= 8 && t < 0x80 && t != 0x08 && t != 0x10 && t != 0x28) {
          if (buf[p + 1] < 0x80) {
            if (t == 0x18) state = buf[p + 1];
            p += 2;
            continue;
          }
          if (t != 0x18) {
            const size_t q = SkipVarint(buf, p + 1, send);
            if (q != 0) {
              p = q;
              continue;
            }
          }
        }
      }
      if (!Next(src, p, send, g, ctx)) return false;
      switch (g.num) {
        case 1:
          if (!Expect(src, g, 2, ctx)) return false;
          id = View(src, g);
          id_hash = Hash(id, kIdSeed);
          break;
        case 2: {  // metadata: repeated occurrences merge
          if (!Expect(src, g, 2, ctx)) return false;
          size_t q = g.start;
          while (q < g.end) {
            if (!Next(src, q, g.end, h, meta_ctx)) return false;
            if (h.num == 1 || h.num == 3) {
              if (!Expect(src, h, 2, meta_ctx)) return false;
              (h.num == 1 ? meta_name : meta_ns) = View(src, h);
            }
          }
          break;
        }
        case 3:
          if (!Expect(src, g, 0, ctx)) return false;
          state = static_cast<uint32_t>(g.value);
          break;
        case 5:
          if (!Expect(src, g, 2, ctx)) return false;
          if (!DecodeLabel(src, g, l, labels_ctx)) return false;
          break;
        default:
          break;
      }
    }
    if (l.uid.empty()) continue;  // not ours
    Item& item = out->emplace_back();
    item.id = id;
    item.hash = id_hash;
    item.uid = l.uid;
    item.name = meta_name.empty() ? l.name : meta_name;
    item.ns = meta_ns.empty() ? l.ns : meta_ns;
    item.state = state == 0 ? kRunning : kExited;
    item.cri_state = static_cast<uint8_t>(state == 0 ? 0 : 1);
    item.pod = HashIndex::kNone;
    item.rec = HashIndex::kNone;
  }
  return true;
}

}  // namespace

bool DecodeContainers(const uint8_t* buf, size_t len, std::vector<Item>* out, uint32_t counts[4], std::string* error) {
  return DecodeContainersRef(len ? buf : kEmpty, len, out, counts, error);
}

bool DecodeSandboxes(const uint8_t* buf, size_t len, std::vector<Item>* out, std::string* error) {
  return DecodeSandboxesRef(len ? buf : kEmpty, len, out, error);
}

bool DecodeContainersFast(const uint8_t* buf, size_t len, std::vector<Item>* out, uint32_t counts[4], std::string* error) {
  return DecodeContainersFastImpl(len ? buf : kEmpty, len, out, counts, error);
}

bool DecodeSandboxesFast(const uint8_t* buf, size_t len, std::vector<Item>* out, std::string* error) {
  return DecodeSandboxesFastImpl(len ? buf : kEmpty, len, out, error);
}

// ---- HashIndex --------------------------------------------------------------------------------

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

// ---- RelistDiffer -----------------------------------------------------------------------------

uint32_t RelistDiffer::FindOrAddPod(std::string_view uid, uint64_t hash) {
  uint32_t idx = pod_index_.Find(hash, [&](uint32_t i) { return pods_[i].uid.view() == uid; });
  if (idx != HashIndex::kNone) return idx;
  if (!free_pods_.empty()) {
    idx = free_pods_.back();
    free_pods_.pop_back();
  } else {
    idx = static_cast<uint32_t>(pods_.size());
    pods_.emplace_back();
  }
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
  uint32_t idx;
  if (!free_recs_.empty()) {
    idx = free_recs_.back();
    free_recs_.pop_back();
  } else {
    idx = static_cast<uint32_t>(recs_.size());
    recs_.emplace_back();
  }
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

uint32_t RelistDiffer::FindRec(const Item& item) const {
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

// Finds each item's retained record, with the slot, the record and the reply bytes of the items
// a few places ahead already on their way into the cache (a lookup is two dependent misses).
void RelistDiffer::Resolve(std::vector<Item>* list) {
  constexpr size_t kSlotAhead = 16, kRecAhead = 8;
  Item* items = list->data();
  const size_t n = list->size();
  for (size_t k = 0; k < n; k++) {
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
    items[k].rec = FindRec(items[k]);
  }
}

void RelistDiffer::Apply(Item* item) {
  const uint64_t hash = item->hash;
  // Found by Resolve(); not found: new, or a duplicate of one added earlier in this relist.
  uint32_t idx = item->rec != HashIndex::kNone ? item->rec : FindRec(*item);
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
    idx = AddRec(pod, item->id, hash, item->state, gen_);
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
  if (pod->name != item.name) pod->name.assign(item.name.data(), item.name.size());
  if (pod->ns != item.ns) pod->ns.assign(item.ns.data(), item.ns.size());
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
  if (!DecodeSandboxesFastImpl(sandboxes_len ? sandboxes : kEmpty, sandboxes_len, &sandboxes_, error)) return false;
  if (!DecodeContainersFastImpl(containers_len ? containers : kEmpty, containers_len, &containers_, counts, error)) return false;
  Resolve(&containers_);
  Resolve(&sandboxes_);

  // 2. Diff. Nothing below can fail. Containers before sandboxes: the first record of an id in
  // a pod wins.
  gen_++;
  seen_ = 0;
  undo_.clear();
  events_.clear();
  // Pod names (first sandbox, else first container) and running pods on the way.
  uint32_t running_pods = 0;
  for (Item& it : containers_) {
    Apply(&it);
    SetInfo(&pods_[it.pod], it, 1);
  }
  for (Item& it : sandboxes_) {
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
