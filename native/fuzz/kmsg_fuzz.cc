// Fuzz target for the kmsg OOM parser (native/src/kmsg.{h,cc}): any bytes split into records and
// fed to OomLineParser must not crash or read out of bounds (ASan/UBSan), and every kill must be
// well formed (pid in [0, INT32_MAX], strings taken from the input). With libFuzzer
// (-DKTS_LIBFUZZER) this file is only the target; otherwise a standalone driver mutates a seed
// corpus of real records for --seconds N (default 5). A failing input goes to crash-kmsg-<pid>.bin.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

#include "../src/kmsg.h"

namespace {

const uint8_t* g_input = nullptr;
size_t g_size = 0;

[[noreturn]] void Fail(const char* what) {
  fprintf(stderr, "CHECK FAILED: %s\n", what);
  char name[64];
  snprintf(name, sizeof name, "crash-kmsg-%d.bin", static_cast<int>(getpid()));
  if (FILE* f = fopen(name, "wb")) {
    fwrite(g_input, 1, g_size, f);
    fclose(f);
  }
  abort();
}

int RunOne(const uint8_t* data, size_t size) {
  g_input = data;
  g_size = size;
  // Copy into an exact-size heap buffer so ASan sees any read past the end.
  std::vector<char> buf(data, data + size);
  std::string_view in(buf.data(), buf.size());
  kts::OomLineParser parser;
  std::vector<kts::OomKill> kills;
  kts::ParseKmsgBuffer(in, &parser, &kills);
  for (const kts::OomKill& k : kills) {
    if (k.pid < 0 || k.pid > INT32_MAX) Fail("pid out of range");
    for (const std::string* s : {&k.comm, &k.constraint, &k.oom_memcg, &k.task_memcg}) {
      if (!s->empty() && in.find(*s) == std::string_view::npos) Fail("a field is not a substring of the input");
    }
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return RunOne(data, size); }

#ifndef KTS_LIBFUZZER
int main(int argc, char** argv) {
  double seconds = 5;
  std::vector<std::string> files;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = atof(argv[++i]);
    else files.push_back(argv[i]);
  }
  for (const std::string& f : files) {
    FILE* fp = fopen(f.c_str(), "rb");
    if (!fp) continue;
    std::vector<uint8_t> d;
    int c;
    while ((c = fgetc(fp)) != EOF) d.push_back(static_cast<uint8_t>(c));
    fclose(fp);
    RunOne(d.data(), d.size());
  }
  if (!files.empty()) return 0;
  const char* seeds[] = {
      "6,2930,8471200100,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=x,mems_allowed=0,oom_memcg=/kubepods/pod1/c,task_memcg=/kubepods/pod1/c,task=tail,pid=12804,uid=0\n",
      "3,2931,8471200150,-;Memory cgroup out of memory: Killed process 12804 (tail) total-vm:22104kB\n",
      "3,2932,1,-;Out of memory: Killed process 777 (my prog) total-vm:1kB\n SUBSYSTEM=memory\n DEVICE=+x\n",
      "6,1,2,c;oom-kill:pid=1,pid=2,task=a,b\n4,2,3;Killed process 2 (\n",
  };
  srand(static_cast<unsigned>(time(nullptr)));
  time_t end = time(nullptr) + static_cast<time_t>(seconds);
  uint64_t runs = 0;
  std::vector<uint8_t> input;
  while (time(nullptr) < end) {
    for (int i = 0; i < 1000; i++, runs++) {
      input.clear();
      int parts = 1 + rand() % 4;
      for (int p = 0; p < parts; p++) {
        const char* s = seeds[rand() % 4];
        input.insert(input.end(), s, s + strlen(s));
      }
      int muts = rand() % 8;
      for (int m = 0; m < muts && !input.empty(); m++) {
        size_t at = static_cast<size_t>(rand()) % input.size();
        switch (rand() % 4) {
          case 0: input[at] = static_cast<uint8_t>(rand()); break;
          case 1: input.erase(input.begin() + static_cast<long>(at)); break;
          case 2: input.insert(input.begin() + static_cast<long>(at), static_cast<uint8_t>("\n ,;=()0123456789"[rand() % 17])); break;
          default: input.resize(at); break;
        }
      }
      RunOne(input.data(), input.size());
    }
  }
  printf("kmsg_fuzz: %llu runs, no failure\n", static_cast<unsigned long long>(runs));
  return 0;
}
#endif
