// See pleg_wire.h: the general field reader and the error messages, out of line.
#include "pleg_wire.h"

namespace kts {
namespace pleg {
namespace wire {

const uint8_t kEmpty[1] = {0};

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

namespace {

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

}  // namespace

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

}  // namespace wire
}  // namespace pleg
}  // namespace kts
