// Fuzz target for the cgroup file parsers (native/src/cgroup_stats.{h,cc}): byte 0 picks the file
// kind, byte 1 the slot, the rest is the file text. Parsing must not crash or read out of bounds
// (ASan/UBSan), must write only inside the row, and single-value kinds must write only their slot.
// Standalone driver (no libFuzzer with g++): mutates seed files for --seconds N (default 5).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "../src/cgroup_stats.h"

namespace {

const uint8_t* g_input = nullptr;
size_t g_size = 0;

[[noreturn]] void Fail(const char* what) {
  fprintf(stderr, "CHECK FAILED: %s\n", what);
  char name[64];
  snprintf(name, sizeof name, "crash-cgroup-%d.bin", static_cast<int>(getpid()));
  if (FILE* f = fopen(name, "wb")) {
    fwrite(g_input, 1, g_size, f);
    fclose(f);
  }
  abort();
}

int RunOne(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  g_input = data;
  g_size = size;
  uint8_t kind = data[0] % (kts::kKinds + 1);
  uint32_t slot = data[1] % (kts::kFields + 3);
  std::vector<char> text(data + 2, data + size);
  // Guard words around the row catch writes outside it.
  std::vector<uint64_t> row(kts::kFields + 2, kts::kMissing);
  kts::ParseCgroupFile(kind, slot, text.data(), text.size(), row.data() + 1);
  if (row.front() != kts::kMissing || row.back() != kts::kMissing) Fail("write outside the row");
  if (kind == kts::kSingle || kind == kts::kLimitV1) {
    for (uint32_t f = 0; f < kts::kFields; f++) {
      if (f != slot && row[f + 1] != kts::kMissing) Fail("single-value kind wrote another slot");
    }
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return RunOne(data, size); }

#ifndef KTS_LIBFUZZER
int main(int argc, char** argv) {
  double seconds = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = atof(argv[++i]);
  }
  const char* seeds[] = {
      "usage_usec 9007199254740993\nuser_usec 1\nsystem_usec 2\nnr_periods 3\nnr_throttled 4\nthrottled_usec 5\n",
      "anon 5000000\nfile 3000000\ninactive_file 1000000\npgfault 18446744073709551615\npgmajfault 0\n",
      "low 0\nhigh 0\nmax 4\noom 1\noom_kill 2\n",
      "8:0 rbytes=4096 wbytes=8192 rios=3 wios=4 dbytes=0 dios=0\n8:16 rbytes=1 wbytes=2\n",
      "8:0 Read 1\n8:0 Write 2\n8:0 Total 3\nTotal 3\n",
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=100\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=50\n",
      "max\n", "9223372036854771712\n", "  123  \n",
  };
  const size_t nseeds = sizeof seeds / sizeof seeds[0];
  srand(static_cast<unsigned>(time(nullptr)));
  time_t end = time(nullptr) + static_cast<time_t>(seconds);
  uint64_t runs = 0;
  std::vector<uint8_t> input;
  while (time(nullptr) < end) {
    for (int i = 0; i < 1000; i++, runs++) {
      input.assign({static_cast<uint8_t>(rand()), static_cast<uint8_t>(rand())});
      const char* s = seeds[static_cast<size_t>(rand()) % nseeds];
      input.insert(input.end(), s, s + strlen(s));
      int muts = rand() % 8;
      for (int m = 0; m < muts && input.size() > 2; m++) {
        size_t at = 2 + static_cast<size_t>(rand()) % (input.size() - 2);
        switch (rand() % 4) {
          case 0: input[at] = static_cast<uint8_t>(rand()); break;
          case 1: input.erase(input.begin() + static_cast<long>(at)); break;
          case 2: input.insert(input.begin() + static_cast<long>(at), static_cast<uint8_t>("\n =0123456789"[rand() % 13])); break;
          default: input.resize(at); break;
        }
      }
      RunOne(input.data(), input.size());
    }
  }
  printf("cgroup_fuzz: %llu runs, no failure\n", static_cast<unsigned long long>(runs));
  return 0;
}
#endif
