// See cgroup_stats.h. Parsing is a single forward scan per file with no allocation.
#include "cgroup_stats.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

namespace kts {
namespace {

struct Slice {
  const char* p;
  size_t n;
  bool Is(const char* lit) const { size_t l = strlen(lit); return n == l && memcmp(p, lit, l) == 0; }
};

// Decimal uint64; false on empty, non-digit or overflow (an exact value or nothing).
bool ParseU64(Slice s, uint64_t* v) {
  if (s.n == 0 || s.n > 20) return false;
  uint64_t x = 0;
  for (size_t i = 0; i < s.n; i++) {
    unsigned d = static_cast<unsigned char>(s.p[i]) - '0';
    if (d > 9) return false;
    if (x > (~uint64_t{0} - d) / 10) return false;
    x = x * 10 + d;
  }
  *v = x;
  return true;
}

bool Scale(uint64_t v, uint64_t k, uint64_t* out) {
  if (v != 0 && k > ~uint64_t{0} / v) return false;
  *out = v * k;
  return true;
}

// Adds v into a summing slot (missing counts as 0); saturates rather than wraps.
void AddTo(uint64_t* slot, uint64_t v) {
  uint64_t cur = *slot == kMissing ? 0 : *slot;
  uint64_t room = (kMissing - 1) - cur;  // cur <= kMissing - 1 here
  *slot = v > room ? kMissing - 1 : cur + v;
}

// Splits text into lines, then each line into space-separated tokens (at most 8 looked at).
template <typename F>
void ForEachLine(const char* text, size_t len, F&& fn) {
  size_t i = 0;
  while (i < len) {
    size_t start = i;
    while (i < len && text[i] != '\n') i++;
    Slice tok[8];
    size_t nt = 0;
    size_t j = start;
    while (j < i && nt < 8) {
      while (j < i && text[j] == ' ') j++;
      if (j >= i) break;
      size_t t = j;
      while (j < i && text[j] != ' ') j++;
      tok[nt++] = Slice{text + t, j - t};
    }
    if (nt > 0) fn(tok, nt);
    i++;
  }
}

struct KeyMap {
  const char* key;
  uint32_t slot;
  uint64_t scale;
  size_t len = strlen(key);  // once per table, not per line and key (memory.stat has ~40 lines)
};

void ParseKeyed(const char* text, size_t len, const KeyMap* map, size_t nmap, uint64_t* row) {
  ForEachLine(text, len, [&](const Slice* tok, size_t nt) {
    if (nt != 2) return;
    for (size_t k = 0; k < nmap; k++) {
      if (tok[0].n != map[k].len || memcmp(tok[0].p, map[k].key, map[k].len) != 0) continue;
      uint64_t v, s;
      if (ParseU64(tok[1], &v) && Scale(v, map[k].scale, &s)) row[map[k].slot] = s;
      return;
    }
  });
}

const KeyMap kCpuStatV2Map[] = {{"usage_usec", kCpuUsageNs, 1000}, {"user_usec", kCpuUserNs, 1000},
                                {"system_usec", kCpuSystemNs, 1000}, {"nr_periods", kCpuPeriods, 1},
                                {"nr_throttled", kCpuThrottled, 1}, {"throttled_usec", kCpuThrottledNs, 1000}};
const KeyMap kMemStatV2Map[] = {{"inactive_file", kMemInactiveFile, 1}, {"anon", kMemRss, 1},
                                {"pgfault", kMemPgfault, 1}, {"pgmajfault", kMemPgmajfault, 1}, {"file", kMemCache, 1}};
const KeyMap kMemEventsV2Map[] = {{"oom", kOom, 1}, {"oom_kill", kOomKill, 1}, {"max", kMemFailcnt, 1}};
const KeyMap kMemStatV1Map[] = {{"total_inactive_file", kMemInactiveFile, 1}, {"total_rss", kMemRss, 1},
                                {"total_pgfault", kMemPgfault, 1}, {"total_pgmajfault", kMemPgmajfault, 1},
                                {"total_cache", kMemCache, 1}};
const KeyMap kOomControlV1Map[] = {{"oom_kill", kOomKill, 1}};
const KeyMap kCpuStatV1Map[] = {{"nr_periods", kCpuPeriods, 1}, {"nr_throttled", kCpuThrottled, 1},
                                {"throttled_time", kCpuThrottledNs, 1}};

template <size_t N>
void Keyed(const char* text, size_t len, const KeyMap (&map)[N], uint64_t* row) { ParseKeyed(text, len, map, N, row); }

// "8:0 rbytes=1 wbytes=2 rios=3 ..." per device.
void ParseIoStatV2(const char* text, size_t len, uint64_t* row) {
  ForEachLine(text, len, [&](const Slice* tok, size_t nt) {
    for (size_t t = 1; t < nt; t++) {
      const Slice& s = tok[t];
      uint64_t v;
      if (s.n > 7 && memcmp(s.p, "rbytes=", 7) == 0 && ParseU64({s.p + 7, s.n - 7}, &v)) AddTo(&row[kIoRead], v);
      if (s.n > 7 && memcmp(s.p, "wbytes=", 7) == 0 && ParseU64({s.p + 7, s.n - 7}, &v)) AddTo(&row[kIoWrite], v);
    }
  });
}

// blkio.throttle.io_service_bytes: "8:0 Read 123" ... "Total 456".
void ParseBlkioV1(const char* text, size_t len, uint64_t* row) {
  ForEachLine(text, len, [&](const Slice* tok, size_t nt) {
    uint64_t v;
    if (nt != 3 || !ParseU64(tok[2], &v)) return;
    if (tok[1].Is("Read")) AddTo(&row[kIoRead], v);
    if (tok[1].Is("Write")) AddTo(&row[kIoWrite], v);
  });
}

// "some avg10=0.00 avg60=0.00 avg300=0.00 total=123"
void ParsePsi(uint32_t slot, const char* text, size_t len, uint64_t* row) {
  if (slot + 1 >= kFields) return;
  ForEachLine(text, len, [&](const Slice* tok, size_t nt) {
    uint32_t target;
    if (tok[0].Is("some")) target = slot;
    else if (tok[0].Is("full")) target = slot + 1;
    else return;
    for (size_t t = 1; t < nt; t++) {
      uint64_t v;
      if (tok[t].n > 6 && memcmp(tok[t].p, "total=", 6) == 0 && ParseU64({tok[t].p + 6, tok[t].n - 6}, &v)) row[target] = v;
    }
  });
}

Slice Trim(const char* text, size_t len) {
  size_t a = 0, b = len;
  while (a < b && (text[a] == ' ' || text[a] == '\n')) a++;
  while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\n')) b--;
  return Slice{text + a, b - a};
}

}  // namespace

void ParseCgroupFile(uint8_t kind, uint32_t slot, const char* text, size_t len, uint64_t* row) {
  switch (kind) {
    case kSingle:
    case kLimitV1: {
      if (slot >= kFields) return;
      uint64_t v;
      if (!ParseU64(Trim(text, len), &v)) return;
      if (kind == kLimitV1 && v >= (uint64_t{1} << 62)) return;
      row[slot] = v;
      return;
    }
    case kCpuStatV2: return Keyed(text, len, kCpuStatV2Map, row);
    case kMemStatV2: return Keyed(text, len, kMemStatV2Map, row);
    case kMemEventsV2: return Keyed(text, len, kMemEventsV2Map, row);
    case kMemStatV1: return Keyed(text, len, kMemStatV1Map, row);
    case kOomControlV1: return Keyed(text, len, kOomControlV1Map, row);
    case kIoStatV2: return ParseIoStatV2(text, len, row);
    case kBlkioV1: return ParseBlkioV1(text, len, row);
    case kPsi: return ParsePsi(slot, text, len, row);
    case kCpuStatV1: return Keyed(text, len, kCpuStatV1Map, row);
    default: return;
  }
}

CgroupReader::~CgroupReader() { Close(); }

void CgroupReader::Close() {
  for (Entry& e : entries_) {
    if (e.fd >= 0) close(e.fd);
    e.fd = -1;
  }
  entries_.clear();
}

void CgroupReader::SetFiles(std::vector<Spec> specs) {
  std::unordered_map<std::string, int> open_fds;
  for (Entry& e : entries_) {
    if (e.fd >= 0 && !open_fds.emplace(e.spec.path, e.fd).second) close(e.fd);
  }
  std::vector<Entry> next;
  next.reserve(specs.size());
  for (Spec& s : specs) {
    Entry e;
    auto it = open_fds.find(s.path);
    if (it != open_fds.end()) {
      e.fd = it->second;
      open_fds.erase(it);
    }
    e.spec = std::move(s);
    next.push_back(std::move(e));
  }
  for (auto& [path, fd] : open_fds) close(fd);
  entries_ = std::move(next);
}

int CgroupReader::Open(Entry& e) {
  if (e.fd < 0) e.fd = open(e.spec.path.c_str(), O_RDONLY | O_CLOEXEC);
  return e.fd;
}

size_t CgroupReader::Read(uint64_t* out, size_t out_len, uint32_t mask) {
  for (size_t i = 0; i < out_len; i++) out[i] = kMissing;
  size_t files = 0;
  for (Entry& e : entries_) {
    size_t base = static_cast<size_t>(e.spec.group) * kFields;
    if (base + kFields > out_len) continue;
    if (e.spec.need != 0 && (e.spec.need & mask) == 0) continue;
    if (Open(e) < 0) continue;
    size_t used = 0;
    bool failed = false;
    for (;;) {
      if (used == buf_.size()) buf_.resize(buf_.size() * 2);
      ssize_t n = pread(e.fd, buf_.data() + used, buf_.size() - used, static_cast<off_t>(used));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) { failed = true; break; }
      if (n == 0) break;
      used += static_cast<size_t>(n);
      // A short read with a page or more of room left is the end (seq_file fills what fits):
      // this saves the second pread per file.
      if (buf_.size() - used >= 4096) break;
    }
    if (failed) {
      // A removed cgroup answers ENODEV: drop the fd and try to open the path again next pass.
      close(e.fd);
      e.fd = -1;
      continue;
    }
    ParseCgroupFile(e.spec.kind, e.spec.slot, buf_.data(), used, out + base);
    files++;
  }
  return files;
}

}  // namespace kts
