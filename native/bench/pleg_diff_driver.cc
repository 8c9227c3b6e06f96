// Standalone driver of the PLEG relist differ (native/src/pleg.h) for instruction counts and
// timings outside node: replays the bench's relists (bench/pleg-replies.ts writes them: four node
// states, each 1 % churn from the one before) back and forth, as bench/pleg-diff.ts does, each
// copied into a receive buffer before its Diff().
//   pleg_diff_driver DIR N ITERATIONS
// reads DIR/sb<N>_<s>.bin and DIR/ct<N>_<s>.bin (s = 0..3), runs one full diff and 20 warm-up
// diffs, then ITERATIONS timed ones, and prints min/p50/p99 and a checksum of every output and
// of the final state (equal checksums: the same output, byte for byte). Under callgrind
// (scripts/callgrind-pleg.sh) only the timed diffs are instrumented.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#endif

#include "../src/pleg.h"

namespace {

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    fprintf(stderr, "pleg_diff_driver: cannot read %s (write it with: node dist/bench/pleg-replies.js)\n", path.c_str());
    exit(2);
  }
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// 0, 1, 2, 3, 2, 1, 0, 1, ...: every step is one churn step away from the last (bench/pleg-diff.ts).
int PingPong(int i) {
  const int k = i % 6;
  return k < 4 ? k : 6 - k;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: pleg_diff_driver DIR CONTAINERS ITERATIONS\n");
    return 2;
  }
  const std::string dir = argv[1], n = argv[2];
  const int iterations = atoi(argv[3]);
  std::vector<uint8_t> sb[4], ct[4];
  size_t sb_max = 0, ct_max = 0;
  for (int s = 0; s < 4; s++) {
    sb[s] = ReadFile(dir + "/sb" + n + "_" + std::to_string(s) + ".bin");
    ct[s] = ReadFile(dir + "/ct" + n + "_" + std::to_string(s) + ".bin");
    sb_max = std::max(sb_max, sb[s].size());
    ct_max = std::max(ct_max, ct[s].size());
  }
  std::vector<uint8_t> recv_sb(sb_max + 1), recv_ct(ct_max + 1);
  kts::pleg::RelistDiffer d;
  std::string error;
  int step = 0;
  for (int i = 0; i < 21; i++, step++) {  // everything new, then warm-up
    const int s = PingPong(step);
    if (!d.Diff(sb[s].data(), sb[s].size(), ct[s].data(), ct[s].size(), &error)) {
      fprintf(stderr, "pleg_diff_driver: %s\n", error.c_str());
      return 1;
    }
  }
  std::vector<double> ms;
  uint64_t checksum = 0;
  CALLGRIND_START_INSTRUMENTATION;
  for (int i = 0; i < iterations; i++, step++) {
    const int s = PingPong(step);
    memcpy(recv_sb.data(), sb[s].data(), sb[s].size());
    memcpy(recv_ct.data(), ct[s].data(), ct[s].size());
    const auto t0 = std::chrono::steady_clock::now();
    d.Diff(recv_sb.data(), sb[s].size(), recv_ct.data(), ct[s].size(), &error);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    for (const uint8_t b : d.Output()) checksum = checksum * 31 + b;
  }
  std::sort(ms.begin(), ms.end());
  printf("containers %s diffs %d min %.3f p50 %.3f p99 %.3f ms output %016llx state %016llx\n", n.c_str(), iterations, ms[0],
         ms[ms.size() / 2], ms[ms.size() * 99 / 100], static_cast<unsigned long long>(checksum),
         static_cast<unsigned long long>(d.StateDigest()));
  return 0;
}
