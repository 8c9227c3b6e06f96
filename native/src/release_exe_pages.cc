// The node binary (Node 20 here) is 94 MiB of file: 26.5 MiB of code, 45 MiB of read-only data
// (31.6 MiB of it ICU's data, then the V8 and node snapshots and node's own JavaScript sources)
// and 7.3 MiB of dynamic symbol tables. A process keeps every page of it that it ever touched mapped, and each
// mapped page counts in its RSS: at 100 pods the agent had 44 MiB of them, although start-up
// (module loading, snapshot deserialization, symbol lookups of the addon, ICU set-up) had touched
// most and only ~20 MiB are used again afterwards (issue 18: scripts/resident-pages.mjs, and
// the same madvise made through gdb: 44 → 16 MiB at once, 20.5 MiB a minute later).
//
// madvise(MADV_DONTNEED) on a private file mapping removes its pages from this process's page
// table. For a page that was never written (no copy-on-write copy) nothing is lost: the page
// stays in the page cache, and the next access maps it again with a minor fault, the kernel
// mapping its cached neighbours with it. So only mappings of the executable that are not
// writable and hold no anonymous (copy-on-write) page are advised: the RELRO part of the data
// segment, relocated at start-up and then made read-only, holds such copies and is skipped, as
// is everything writable. (A page that became a copy-on-write copy between the read of smaps and
// the madvise, e.g. a debugger's breakpoint, would lose that write: nothing in the agent writes
// to these mappings.)
//
// What this is not: it frees no memory by itself. The pages remain page cache (shared with
// every node process on the host), which the kernel reclaims under pressure whether or not they
// are mapped; RSS then counts what the agent actually keeps using. MADV_COLD would leave the
// pages mapped (RSS unchanged); MADV_PAGEOUT skips pages other processes map and evicts the
// rest from the page cache, so a later touch would read the disk.
#include "release_exe_pages.h"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct ExeMapping {
  uintptr_t start = 0;
  uintptr_t end = 0;
  bool writable = false;
  bool shared = false;
  long rss_kb = -1;
  long anonymous_kb = -1;  // -1: not seen; only a mapping with exactly 0 is advised
};

#if defined(__linux__)

std::string ExePath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// A smaps mapping header ("start-end perms offset dev inode path") naming `exe`.
bool ParseHeader(const char* line, const std::string& exe, ExeMapping* out) {
  unsigned long start = 0, end = 0, offset = 0, inode = 0;
  char perms[8] = {0};
  int path_at = 0;
  if (sscanf(line, "%lx-%lx %7s %lx %*x:%*x %lu %n", &start, &end, perms, &offset, &inode, &path_at) < 5 || path_at == 0) return false;
  std::string path(line + path_at);
  while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
  if (path != exe) return false;
  out->start = start;
  out->end = end;
  out->writable = perms[1] == 'w';
  out->shared = perms[3] == 's';
  return true;
}

// The executable's mappings with their Rss and Anonymous (kB), from /proc/self/smaps.
std::vector<ExeMapping> ExeMappings() {
  std::vector<ExeMapping> out;
  const std::string exe = ExePath();
  FILE* f = exe.empty() ? nullptr : fopen("/proc/self/smaps", "re");
  if (f == nullptr) return out;
  char line[PATH_MAX + 256];
  bool inside = false;
  while (fgets(line, sizeof(line), f) != nullptr) {
    long kb = 0;
    // A mapping's header starts with its address in lower-case hex; its fields ("Rss:",
    // "Anonymous:", "VmFlags:") with a capital letter.
    if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) {
      ExeMapping m;
      inside = ParseHeader(line, exe, &m);
      if (inside) out.push_back(m);
    } else if (inside && sscanf(line, "Rss: %ld kB", &kb) == 1) {
      out.back().rss_kb = kb;
    } else if (inside && sscanf(line, "Anonymous: %ld kB", &kb) == 1) {
      out.back().anonymous_kb = kb;
    }
  }
  fclose(f);
  return out;
}

#endif

}  // namespace

// Returns {mappings, bytes, residentBytes}: how many mappings were advised, their length, and
// how much of them was resident just before; null off Linux.
Napi::Value ReleaseExecutablePages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
#if defined(__linux__)
  double mappings = 0, bytes = 0, resident = 0;
  for (const ExeMapping& m : ExeMappings()) {
    if (m.writable || m.shared || m.anonymous_kb != 0 || m.end <= m.start) continue;
    if (madvise(reinterpret_cast<void*>(m.start), m.end - m.start, MADV_DONTNEED) != 0) continue;
    mappings += 1;
    bytes += static_cast<double>(m.end - m.start);
    resident += static_cast<double>(m.rss_kb > 0 ? m.rss_kb : 0) * 1024;
  }
  Napi::Object r = Napi::Object::New(env);
  r.Set("mappings", mappings);
  r.Set("bytes", bytes);
  r.Set("residentBytes", resident);
  return r;
#else
  return env.Null();
#endif
}
