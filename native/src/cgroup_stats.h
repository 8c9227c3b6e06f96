// cgroup stats hot path: one batch read of every container, pod and node cgroup file per stats
// pass, over persistent fds with pread, parsed into a flat uint64 table (group x field). No N-API
// here: addon.cc converts. The TypeScript twin is src/stats/cgroup-reader-ts.ts; both parse the
// same file kinds into the same slots (test/native/cgroup-reader.contract.test.ts).
//
// Table: out[group * kFields + field]; kMissing (2^64-1) where a file is absent, unreadable or
// holds no such key. Counters stay exact uint64 (v2 *_usec values are scaled to ns by 1000).
// File kinds and the slots they fill (shared with the twin, src/stats/cgroup-fields.ts):
//   kSingle        one decimal value -> slot; "max" -> missing
//   kLimitV1       memory.limit_in_bytes: values >= 2^62 mean unlimited -> missing
//   kCpuStatV2     usage_usec/user_usec/system_usec (x1000), nr_periods, nr_throttled, throttled_usec (x1000)
//   kMemStatV2     inactive_file, anon (rss), pgfault, pgmajfault, file (cache)
//   kMemEventsV2   oom, oom_kill, max (failcnt)
//   kMemStatV1     total_inactive_file, total_rss, total_pgfault, total_pgmajfault, total_cache
//   kOomControlV1  oom_kill
//   kIoStatV2      sum over devices of rbytes, wbytes
//   kBlkioV1       sum over devices of "<dev> Read N" and "<dev> Write N"
//   kPsi           "some ... total=N" -> slot, "full ... total=N" -> slot + 1 (µs)
//   kCpuStatV1     nr_periods, nr_throttled, throttled_time (ns)
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace kts {

constexpr uint64_t kMissing = ~uint64_t{0};

enum CgroupField : uint32_t {
  kCpuUsageNs = 0, kCpuUserNs, kCpuSystemNs, kMemUsage, kMemLimit, kMemInactiveFile, kMemRss,
  kMemPgfault, kMemPgmajfault, kOomKill, kOom, kMemFailcnt, kPids, kIoRead, kIoWrite, kMemCache,
  kPsiCpuSome, kPsiCpuFull, kPsiMemSome, kPsiMemFull, kPsiIoSome, kPsiIoFull,
  kCpuPeriods, kCpuThrottled, kCpuThrottledNs, kFields
};

enum CgroupFileKind : uint8_t {
  kSingle = 0, kLimitV1, kCpuStatV2, kMemStatV2, kMemEventsV2, kMemStatV1, kOomControlV1,
  kIoStatV2, kBlkioV1, kPsi, kCpuStatV1, kKinds
};

// Parses one file's text of `kind` into row (kFields slots; `slot` for kSingle/kLimitV1/kPsi).
// Never reads past len; malformed lines are skipped.
void ParseCgroupFile(uint8_t kind, uint32_t slot, const char* text, size_t len, uint64_t* row);

class CgroupReader {
 public:
  CgroupReader() = default;
  ~CgroupReader();
  CgroupReader(const CgroupReader&) = delete;
  CgroupReader& operator=(const CgroupReader&) = delete;

  struct Spec {
    std::string path;
    uint8_t kind;
    uint32_t group;
    uint32_t slot;
    uint32_t need;  // NEED bits (src/stats/cgroup-fields.ts); 0: read in every pass
  };
  // Replaces the file set: fds of paths still wanted are kept, others closed. Opens lazily.
  void SetFiles(std::vector<Spec> specs);
  // Fills out[0 .. groups*kFields) (kMissing first) from the files whose need is 0 or shares a
  // bit with mask. Returns the number of files read.
  size_t Read(uint64_t* out, size_t out_len, uint32_t mask = ~uint32_t{0});
  void Close();

 private:
  struct Entry {
    Spec spec;
    int fd = -1;
  };
  int Open(Entry& e);
  std::vector<Entry> entries_;
  std::vector<char> buf_ = std::vector<char>(16384);
};

}  // namespace kts
