// glibc keeps memory that bursts of allocations freed (V8 compiler zones, Buffer backing stores)
// in its arenas, and gives back only what sits at the top of the heap. At 100 pods that was
// ~30 MiB of the agent's RSS; malloc_trim(0) also releases the free pages in the middle
// (docs/perf-log.md). Not glibc: nothing to do, returns false.
#include "malloc_trim.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

Napi::Value MallocTrim(const Napi::CallbackInfo& info) {
#if defined(__GLIBC__)
  return Napi::Boolean::New(info.Env(), malloc_trim(0) != 0);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}
