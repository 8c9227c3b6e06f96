// Fuzz target for the cgroup file parsers (native/src/cgroup_stats.{h,cc}): byte 0 picks the file
// kind, byte 1 the slot, the rest is the file text. Parsing must not crash or read out of bounds
// (ASan/UBSan), must write only inside the row, and single-value kinds must write only their slot.
// Standalone driver (fuzz_driver.h; no libFuzzer with g++): mutates seed files for --seconds N
// (default 5). A failing input goes to crash-cgroup-<pid>.bin.
#include <stdint.h>

#include <string>
#include <vector>

#include "../src/cgroup_stats.h"
#include "fuzz_driver.h"

using kts::fuzz::Die;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const kts::fuzz::Input input(data, size);
  uint8_t kind = data[0] % (kts::kKinds + 1);
  uint32_t slot = data[1] % (kts::kFields + 3);
  std::vector<char> text(data + 2, data + size);
  // Guard words around the row catch writes outside it.
  std::vector<uint64_t> row(kts::kFields + 2, kts::kMissing);
  kts::ParseCgroupFile(kind, slot, text.data(), text.size(), row.data() + 1);
  if (row.front() != kts::kMissing || row.back() != kts::kMissing) Die("write outside the row");
  if (kind == kts::kSingle || kind == kts::kLimitV1) {
    for (uint32_t f = 0; f < kts::kFields; f++) {
      if (f != slot && row[f + 1] != kts::kMissing) Die("single-value kind wrote another slot");
    }
  }
  return 0;
}

#ifndef KTS_LIBFUZZER
int main(int argc, char** argv) {
  static const char* const kSeeds[] = {
      "usage_usec 9007199254740993\nuser_usec 1\nsystem_usec 2\nnr_periods 3\nnr_throttled 4\nthrottled_usec 5\n",
      "anon 5000000\nfile 3000000\ninactive_file 1000000\npgfault 18446744073709551615\npgmajfault 0\n",
      "low 0\nhigh 0\nmax 4\noom 1\noom_kill 2\n",
      "8:0 rbytes=4096 wbytes=8192 rios=3 wios=4 dbytes=0 dios=0\n8:16 rbytes=1 wbytes=2\n",
      "8:0 Read 1\n8:0 Write 2\n8:0 Total 3\nTotal 3\n",
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=100\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=50\n",
      "max\n", "9223372036854771712\n", "  123  \n",
  };
  // A random kind and slot, one seed file, byte mutations of the text.
  return kts::fuzz::Main(argc, argv, "cgroup", 5, kts::fuzz::FromSeeds(kSeeds, 2, 1, "\n =0123456789"));
}
#endif
