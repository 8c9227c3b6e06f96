// Fuzz target for the PLEG relist decoder + differ (native/src/pleg*.{h,cc}).
//
// Input: byte 0 = number of relists - 1 (mod 4), byte 1 = flags, then per relist a u16 LE
// length + ListPodSandboxResponse bytes and a u16 LE length + ListContainersResponse bytes
// (lengths clamped to what is left). Each relist goes through RelistDiffer::Diff; the target
// checks that a rejected reply leaves the retained state untouched, that the output buffer is
// well formed, that the record/pod tables stay consistent, that Diff() accepts exactly what the
// reference decoders accept (with the same error message), and that the fast decoders Diff()
// uses produce exactly the reference decoders' items.
//
// With libFuzzer (clang -fsanitize=fuzzer,address,undefined -DKTS_LIBFUZZER) this file is only
// the target. Without it (g++ has no libFuzzer), the standalone driver (fuzz_driver.h) runs
// valid relist sequences generated below as a seed corpus, random and mutated inputs for a
// bounded time:
//   pleg_fuzz [--seconds N] [--runs N] [--seed N] [file...]
// Files given on the command line are run once each (to reproduce a crash). On a failed check
// or a sanitizer report the current input is written to crash-pleg-<pid>.bin.
#include <string.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../src/pleg.h"
#include "fuzz_driver.h"
#include "pleg_reference_decoder.h"

namespace {

using kts::fuzz::Die;

uint32_t U32(const std::vector<uint8_t>& b, size_t at) {
  if (at + 4 > b.size()) Die("output truncated");
  return static_cast<uint32_t>(b[at]) | static_cast<uint32_t>(b[at + 1]) << 8 | static_cast<uint32_t>(b[at + 2]) << 16 |
         static_cast<uint32_t>(b[at + 3]) << 24;
}

// Validates the output layout (pleg.h) and returns the uid of the first pod, if any.
std::string CheckOutput(const std::vector<uint8_t>& out) {
  if (out.size() < kts::pleg::kOutputHeader) Die("output shorter than its header");
  const uint32_t n_pods = U32(out, 20), n_events = U32(out, 24);
  size_t off = kts::pleg::kOutputHeader;
  std::string first_uid;
  std::string prev_uid;
  for (uint32_t i = 0; i < n_pods; i++) {
    const uint32_t a = U32(out, off), b = U32(out, off + 4), c = U32(out, off + 8);
    off += 12;
    if (off + a + b + c > out.size()) Die("pod strings past the end");
    std::string uid(reinterpret_cast<const char*>(out.data() + off), a);
    if (i > 0 && !(prev_uid < uid)) Die("pods not in uid order");
    if (i == 0) first_uid = uid;
    prev_uid = uid;
    off += a + b + c;
  }
  if ((n_pods == 0) != (n_events == 0)) Die("pods without events or events without pods");
  uint32_t last_pod = 0;
  for (uint32_t i = 0; i < n_events; i++) {
    if (off + 9 > out.size()) Die("event header past the end");
    const uint8_t type = out[off];
    if (type < kts::pleg::kStarted || type > kts::pleg::kChanged) Die("bad event type");
    const uint32_t pod = U32(out, off + 1), len = U32(out, off + 5);
    if (pod >= n_pods || pod < last_pod) Die("event pod index out of range or out of order");
    last_pod = pod;
    off += 9;
    if (off + len > out.size()) Die("event id past the end");
    off += len;
  }
  if (off != out.size()) Die("trailing output bytes");
  return first_uid;
}

// Copies a chunk into an exactly sized heap block so that ASan sees any read past its end.
struct Chunk {
  std::vector<uint8_t> bytes;
  const uint8_t* data() const { return bytes.empty() ? nullptr : bytes.data(); }
};

Chunk Take(const uint8_t* data, size_t size, size_t* pos) {
  Chunk c;
  if (*pos + 2 > size) {
    *pos = size;
    return c;
  }
  size_t len = data[*pos] | static_cast<size_t>(data[*pos + 1]) << 8;
  *pos += 2;
  if (len > size - *pos) len = size - *pos;
  c.bytes.assign(data + *pos, data + *pos + len);
  c.bytes.shrink_to_fit();
  *pos += len;
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kts::fuzz::Input input(data, size);
  if (size < 2) return 0;
  const size_t steps = 1 + data[0] % 4;
  const uint8_t flags = data[1];
  size_t pos = 2;
  kts::pleg::RelistDiffer d;
  std::string why;
  for (size_t step = 0; step < steps && pos < size; step++) {
    const Chunk sb = Take(data, size, &pos);
    const Chunk ct = Take(data, size, &pos);

    // The plain decoders: accept and reject exactly what Diff() does.
    std::vector<kts::pleg::Item> items;
    uint32_t counts[4] = {0, 0, 0, 0};
    std::string plain_error;
    const bool plain_ok = kts::pleg::DecodeSandboxes(sb.data(), sb.bytes.size(), &items, &plain_error) &&
                          kts::pleg::DecodeContainers(ct.data(), ct.bytes.size(), &items, counts, &plain_error);

    // The fast decoders (what Diff() uses) give exactly the reference decoders' items.
    std::vector<kts::pleg::Item> fast;
    uint32_t fast_counts[4] = {0, 0, 0, 0};
    std::string fast_error;
    const bool fast_ok = kts::pleg::DecodeSandboxesFast(sb.data(), sb.bytes.size(), &fast, &fast_error) &&
                         kts::pleg::DecodeContainersFast(ct.data(), ct.bytes.size(), &fast, fast_counts, &fast_error);
    if (fast_ok != plain_ok || fast_error != plain_error) Die("fast and reference decoders disagree", fast_error + " | " + plain_error);
    if (fast_ok) {
      if (fast.size() != items.size() || memcmp(fast_counts, counts, sizeof counts) != 0) Die("fast decoder: other items or counts");
      for (size_t i = 0; i < items.size(); i++) {
        const kts::pleg::Item &a = items[i], &b = fast[i];
        if (a.id != b.id || a.uid != b.uid || a.name != b.name || a.ns != b.ns || a.hash != b.hash || a.state != b.state ||
            a.cri_state != b.cri_state)
          Die("fast decoder: item differs", std::to_string(i));
      }
    }

    const uint64_t before = d.StateDigest();
    const size_t records_before = d.RecordCount();
    std::string error;
    const bool ok = d.Diff(sb.data(), sb.bytes.size(), ct.data(), ct.bytes.size(), &error);
    if (ok != plain_ok) Die("Diff() and the plain decoders disagree", error + " | " + plain_error);
    if (!ok) {
      if (error.empty()) Die("rejected without a message");
      if (error != plain_error) Die("different error messages", error + " | " + plain_error);
      if (d.StateDigest() != before || d.RecordCount() != records_before) Die("a rejected reply changed the state", error);
    } else {
      const std::vector<uint8_t>& out = d.Output();
      const uint32_t c[4] = {U32(out, 4), U32(out, 8), U32(out, 12), U32(out, 16)};
      if (memcmp(c, counts, sizeof c) != 0) Die("container counts differ from the plain decoder");
      const std::string uid = CheckOutput(out);
      if (!uid.empty()) {
        std::string_view name, ns;
        if (!d.PodInfo(uid, &name, &ns)) Die("a pod with events has no info", uid);
        if (flags & 1) d.KeepPrevious(uid);
        if (flags & 8) d.KeepPrevious(uid);  // twice: no effect
      }
    }
    if (!d.CheckInvariants(&why)) Die("invariant", why);
    if (flags & 2) {
      std::string_view name, ns;
      d.PodInfo(std::string_view(reinterpret_cast<const char*>(data), size < 36 ? size : 36), &name, &ns);
    }
    if ((flags & 4) && step == 1) d.Reset();
  }
  return 0;
}

#ifndef KTS_LIBFUZZER
// ---- standalone driver ------------------------------------------------------------------------

namespace {

using kts::fuzz::Rand;
using kts::fuzz::RandN;

struct W {
  std::string b;
  W& Varint(uint64_t v) {
    while (v >= 0x80) {
      b.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    b.push_back(static_cast<char>(v));
    return *this;
  }
  W& Tag(uint32_t num, uint32_t wt) { return Varint(static_cast<uint64_t>(num) << 3 | wt); }
  W& Bytes(uint32_t num, std::string_view s) {
    Tag(num, 2).Varint(s.size());
    b.append(s);
    return *this;
  }
  W& Str(uint32_t num, std::string_view s) { return s.empty() ? *this : Bytes(num, s); }
  W& Int(uint32_t num, uint64_t v) { return v == 0 ? *this : Tag(num, 0).Varint(v); }
  W& Label(uint32_t num, std::string_view k, std::string_view v) {
    W e;
    e.Str(1, k).Str(2, v);
    return Bytes(num, e.b);
  }
};

std::string Hex(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; i++) s.push_back("0123456789abcdef"[RandN(16)]);
  return s;
}

struct Ctr {
  std::string id;
  uint64_t state;
};
struct Pod {
  std::string uid, name, ns;
  std::vector<Ctr> sandboxes, containers;
};

// Odd but valid extras: unknown fields of every wire type.
void Noise(W& w) {
  switch (RandN(6)) {
    case 0: w.Tag(50, 0).Varint(Rand()); break;
    case 1: w.Tag(51, 1).b.append(8, 'x'); break;
    case 2: w.Tag(52, 5).b.append(4, 'y'); break;
    case 3: w.Bytes(53, Hex(RandN(20))); break;
    default: break;
  }
}

std::string EncodeSandboxes(const std::vector<Pod>& pods) {
  W out;
  for (const Pod& p : pods) {
    for (const Ctr& s : p.sandboxes) {
      W m;
      m.Str(1, s.id);
      if (RandN(8) != 0) {
        W md;
        md.Str(1, RandN(6) == 0 ? std::string() : p.name).Str(2, p.uid).Str(3, p.ns).Int(4, RandN(3));
        m.Bytes(2, md.b);
      }
      m.Int(3, s.state).Int(4, 1700000000000000000ULL + RandN(1000));
      if (RandN(10) != 0) m.Label(5, "io.kubernetes.pod.uid", p.uid);
      m.Label(5, "io.kubernetes.pod.name", p.name).Label(5, "app", "x");
      m.Label(6, "kubernetes.io/config.source", "api");
      if (RandN(4) == 0) Noise(m);
      out.Bytes(1, m.b);
    }
  }
  return out.b;
}

std::string EncodeContainers(const std::vector<Pod>& pods) {
  W out;
  for (const Pod& p : pods) {
    for (const Ctr& c : p.containers) {
      W m;
      m.Str(1, c.id).Str(2, p.sandboxes.empty() ? std::string() : p.sandboxes[0].id);
      W md;
      md.Str(1, "c").Int(2, RandN(3));
      m.Bytes(3, md.b);
      W img;
      img.Str(1, "sha256:" + Hex(16));
      m.Bytes(4, img.b).Str(5, "docker.io/x@sha256:" + Hex(16)).Int(6, c.state).Int(7, 1700000000000000000ULL);
      if (RandN(12) != 0) m.Label(8, "io.kubernetes.container.name", "c");
      m.Label(8, "io.kubernetes.pod.name", p.name).Label(8, "io.kubernetes.pod.namespace", p.ns);
      if (RandN(12) != 0) m.Label(8, "io.kubernetes.pod.uid", p.uid);
      m.Label(9, "io.kubernetes.container.hash", "abc").Label(9, "io.kubernetes.container.restartCount", "0");
      if (RandN(4) == 0) Noise(m);
      out.Bytes(1, m.b);
    }
  }
  if (RandN(6) == 0) Noise(out);
  return out.b;
}

void Step(std::vector<Pod>* pods) {
  const uint64_t states[] = {0, 1, 1, 2, 2, 3, 7};
  for (int n = static_cast<int>(RandN(4)); n > 0; n--) {
    const size_t op = RandN(7);
    if (op == 0 || pods->empty()) {
      Pod p;
      p.uid = Hex(8) + "-" + Hex(4);
      p.name = "pod-" + Hex(4);
      p.ns = "ns";
      p.sandboxes.push_back({Hex(12), 0});
      for (size_t i = RandN(4); i > 0; i--) p.containers.push_back({Hex(12), 1});
      pods->push_back(p);
      continue;
    }
    Pod& p = (*pods)[RandN(pods->size())];
    switch (op) {
      case 1: pods->erase(pods->begin() + static_cast<long>(RandN(pods->size()))); break;
      case 2: if (!p.containers.empty()) p.containers[RandN(p.containers.size())].state = states[RandN(7)]; break;
      case 3: p.containers.push_back({RandN(5) == 0 && !p.containers.empty() ? p.containers[0].id : Hex(12), 1}); break;
      case 4: if (!p.containers.empty()) p.containers.erase(p.containers.begin() + static_cast<long>(RandN(p.containers.size()))); break;
      case 5: if (!p.sandboxes.empty()) p.sandboxes[RandN(p.sandboxes.size())].state = RandN(2); break;
      default: p.sandboxes.push_back({Hex(12), 0}); break;
    }
  }
}

void PutChunk(std::string* in, const std::string& s) {
  const size_t len = s.size() > 0xffff ? 0xffff : s.size();
  in->push_back(static_cast<char>(len & 0xff));
  in->push_back(static_cast<char>(len >> 8));
  in->append(s, 0, len);
}

std::string SeedInput() {
  std::vector<Pod> pods;
  const size_t steps = 1 + RandN(4);
  std::string in;
  in.push_back(static_cast<char>(steps - 1));
  in.push_back(static_cast<char>(RandN(16)));
  for (size_t i = 0; i < steps; i++) {
    Step(&pods);
    PutChunk(&in, EncodeSandboxes(pods));
    PutChunk(&in, EncodeContainers(pods));
  }
  return in;
}

void Mutate(std::string* s, const std::vector<std::string>& corpus) {
  static const uint8_t kInteresting[] = {0x00, 0x01, 0x02, 0x05, 0x07, 0x08, 0x0a, 0x0b, 0x0c, 0x0e, 0x12, 0x7f, 0x80, 0xff};
  for (int n = 1 + static_cast<int>(RandN(4)); n > 0; n--) {
    switch (RandN(8)) {
      case 0:
        if (!s->empty()) (*s)[RandN(s->size())] ^= static_cast<char>(1u << RandN(8));
        break;
      case 1:
        if (!s->empty()) (*s)[RandN(s->size())] = static_cast<char>(kInteresting[RandN(sizeof kInteresting)]);
        break;
      case 2:
        s->insert(RandN(s->size() + 1), 1 + RandN(8), static_cast<char>(kInteresting[RandN(sizeof kInteresting)]));
        break;
      case 3:
        if (!s->empty()) s->erase(RandN(s->size()), 1 + RandN(16));
        break;
      case 4:
        s->resize(RandN(s->size() + 1));
        break;
      case 5: {  // duplicate a range
        if (s->empty()) break;
        const size_t at = RandN(s->size()), len = RandN(s->size() - at + 1);
        s->insert(at, s->substr(at, len));
        break;
      }
      case 6: {  // splice another input in
        const std::string& o = corpus[RandN(corpus.size())];
        if (o.empty()) break;
        const size_t from = RandN(o.size()), len = RandN(o.size() - from + 1);
        s->insert(RandN(s->size() + 1), o.substr(from, len));
        break;
      }
      default: {  // an overlong varint
        std::string v(9 + RandN(3), static_cast<char>(0xff));
        v.back() = static_cast<char>(kInteresting[RandN(sizeof kInteresting)]);
        s->insert(RandN(s->size() + 1), v);
        break;
      }
    }
  }
  if (s->size() > (1u << 18)) s->resize(1u << 18);
}

}  // namespace

int main(int argc, char** argv) {
  // A fresh valid sequence (kept in the corpus), random bytes, or a mutated corpus entry.
  std::vector<std::string> corpus;
  return kts::fuzz::Main(argc, argv, "pleg", 20, [&corpus](std::string* in) {
    while (corpus.size() < 64) corpus.push_back(SeedInput());
    switch (RandN(10)) {
      case 0:
        *in = SeedInput();
        if (corpus.size() < 512) corpus.push_back(*in);
        else corpus[RandN(corpus.size())] = *in;
        break;
      case 1:
        in->resize(RandN(256));
        for (char& c : *in) c = static_cast<char>(Rand());
        break;
      default:
        *in = corpus[RandN(corpus.size())];
        Mutate(in, corpus);
        break;
    }
  });
}
#endif  // KTS_LIBFUZZER
