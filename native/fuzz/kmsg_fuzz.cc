// Fuzz target for the kmsg OOM parser (native/src/kmsg.{h,cc}): any bytes split into records and
// fed to OomLineParser must not crash or read out of bounds (ASan/UBSan), and every kill must be
// well formed (pid in [0, INT32_MAX], strings taken from the input). With libFuzzer
// (-DKTS_LIBFUZZER) this file is only the target; otherwise the standalone driver (fuzz_driver.h)
// mutates a seed corpus of real records for --seconds N (default 5). A failing input goes to
// crash-kmsg-<pid>.bin.
#include <stdint.h>

#include <string>
#include <string_view>
#include <vector>

#include "../src/kmsg.h"
#include "fuzz_driver.h"

using kts::fuzz::Die;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kts::fuzz::Input input(data, size);
  // Copy into an exact-size heap buffer so ASan sees any read past the end.
  std::vector<char> buf(data, data + size);
  std::string_view in(buf.data(), buf.size());
  kts::OomLineParser parser;
  std::vector<kts::OomKill> kills;
  kts::ParseKmsgBuffer(in, &parser, &kills);
  for (const kts::OomKill& k : kills) {
    if (k.pid < 0 || k.pid > INT32_MAX) Die("pid out of range");
    for (const std::string* s : {&k.comm, &k.constraint, &k.oom_memcg, &k.task_memcg}) {
      if (!s->empty() && in.find(*s) == std::string_view::npos) Die("a field is not a substring of the input");
    }
  }
  return 0;
}

#ifndef KTS_LIBFUZZER
int main(int argc, char** argv) {
  static const char* const kSeeds[] = {
      "6,2930,8471200100,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=x,mems_allowed=0,oom_memcg=/kubepods/pod1/c,task_memcg=/kubepods/pod1/c,task=tail,pid=12804,uid=0\n",
      "3,2931,8471200150,-;Memory cgroup out of memory: Killed process 12804 (tail) total-vm:22104kB\n",
      "3,2932,1,-;Out of memory: Killed process 777 (my prog) total-vm:1kB\n SUBSYSTEM=memory\n DEVICE=+x\n",
      "6,1,2,c;oom-kill:pid=1,pid=2,task=a,b\n4,2,3;Killed process 2 (\n",
  };
  return kts::fuzz::Main(argc, argv, "kmsg", 5, kts::fuzz::FromSeeds(kSeeds, 0, 4, "\n ,;=()0123456789"));
}
#endif
