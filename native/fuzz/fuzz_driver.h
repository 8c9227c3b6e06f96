// What the fuzz targets (native/fuzz/*_fuzz.cc) share: the input being run (written to
// crash-<name>-<pid>.bin on a failed check or a sanitizer report), a seeded RNG, byte mutations,
// and the standalone driver (g++ has no libFuzzer):
//   <name>_fuzz [--seconds N] [--runs N] [--seed N] [file...]
// Files given are run once each (to reproduce a crash); otherwise the target's generator makes
// inputs until the time or the runs are up. Each target defines LLVMFuzzerTestOneInput (with an
// Input for its duration) and, unless built for libFuzzer (-DKTS_LIBFUZZER), a main() that calls
// Main(). Scripts: scripts/fuzz-pleg.sh, scripts/fuzz-parsers.sh.
#pragma once

#include <sanitizer/common_interface_defs.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace kts {
namespace fuzz {

inline const char* g_name = "fuzz";  // the target's name, for messages and crash files
inline const uint8_t* g_input = nullptr;
inline size_t g_input_size = 0;

// The input of one run, for DumpInput(), while it lives.
class Input {
 public:
  Input(const uint8_t* data, size_t size) {
    g_input = data;
    g_input_size = size;
  }
  ~Input() { g_input = nullptr; }
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;
};

inline void DumpInput() {
  if (g_input == nullptr) return;
  char name[96];
  snprintf(name, sizeof name, "crash-%s-%d.bin", g_name, static_cast<int>(getpid()));
  FILE* f = fopen(name, "wb");
  if (f == nullptr) return;
  fwrite(g_input, 1, g_input_size, f);
  fclose(f);
  fprintf(stderr, "%s_fuzz: input written to %s (%zu bytes)\n", g_name, name, g_input_size);
}

// A failed check: "CHECK FAILED" (what the scripts look for), the input saved, abort().
[[noreturn]] inline void Die(const char* what, const std::string& detail = std::string()) {
  fprintf(stderr, "%s_fuzz: CHECK FAILED: %s %s\n", g_name, what, detail.c_str());
  DumpInput();
  abort();
}

inline uint64_t g_rng = 0x9e3779b97f4a7c15ULL;
inline uint64_t Rand() {  // splitmix64
  uint64_t z = (g_rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
inline size_t RandN(size_t n) { return n == 0 ? 0 : Rand() % n; }

// Up to 7 mutations at or after `from`: a random byte, a byte deleted, a byte of `alphabet`
// inserted, or the input cut there.
inline void MutateBytes(std::string* in, size_t from, std::string_view alphabet) {
  for (size_t m = RandN(8); m > 0 && in->size() > from; m--) {
    const size_t at = from + RandN(in->size() - from);
    switch (RandN(4)) {
      case 0: (*in)[at] = static_cast<char>(Rand()); break;
      case 1: in->erase(at, 1); break;
      case 2: in->insert(at, 1, alphabet[RandN(alphabet.size())]); break;
      default: in->resize(at); break;
    }
  }
}

// A generator for the text parsers' targets: `prefix` random bytes (the target's parameters), 1
// to `max_parts` of the seeds, then MutateBytes() after the prefix.
template <size_t N>
auto FromSeeds(const char* const (&seeds)[N], size_t prefix, size_t max_parts, std::string_view alphabet) {
  return [&seeds, prefix, max_parts, alphabet](std::string* in) {
    for (size_t i = 0; i < prefix; i++) in->push_back(static_cast<char>(Rand()));
    for (size_t parts = 1 + RandN(max_parts); parts > 0; parts--) in->append(seeds[RandN(N)]);
    MutateBytes(in, prefix, alphabet);
  };
}

inline double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

inline void Run(const std::string& in) { LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(in.data()), in.size()); }

// The standalone driver. next(&in) sets the next input (called after --seed took effect).
template <class Next>
int Main(int argc, char** argv, const char* name, double seconds, Next next) {
  g_name = name;
  uint64_t runs = UINT64_MAX;
  uint64_t seed = static_cast<uint64_t>(time(nullptr)) ^ static_cast<uint64_t>(getpid());
  std::vector<const char*> files;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) seconds = atof(argv[++i]);
    else if (a == "--runs" && i + 1 < argc) runs = strtoull(argv[++i], nullptr, 10);
    else if (a == "--seed" && i + 1 < argc) seed = strtoull(argv[++i], nullptr, 10);
    else if (a == "--help" || a == "-h") {
      fprintf(stderr, "usage: %s [--seconds N] [--runs N] [--seed N] [file...]\n", argv[0]);
      return 2;
    } else files.push_back(argv[i]);
  }
  __sanitizer_set_death_callback(DumpInput);
  for (const char* path : files) {
    FILE* f = fopen(path, "rb");
    if (f == nullptr) {
      perror(path);
      return 2;
    }
    std::string in;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) in.append(buf, n);
    fclose(f);
    Run(in);
    fprintf(stderr, "%s_fuzz: %s ok\n", name, path);
  }
  if (!files.empty()) return 0;
  g_rng = seed;
  fprintf(stderr, "%s_fuzz: seed %llu, %.0f s\n", name, static_cast<unsigned long long>(seed), seconds);
  const double deadline = Now() + seconds;
  uint64_t n = 0;
  std::string in;
  while (n < runs) {
    if ((n & 63) == 0 && Now() > deadline) break;
    in.clear();
    next(&in);
    Run(in);
    n++;
  }
  fprintf(stderr, "%s_fuzz: %llu inputs, no failure\n", name, static_cast<unsigned long long>(n));
  return 0;
}

}  // namespace fuzz
}  // namespace kts
