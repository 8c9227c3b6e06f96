// releaseExecutablePages(): drops this process's mappings of the never-written pages of its own
// executable (the node binary) from its page tables; they stay in the page cache and come back
// on the next touch (docs/performance.md).
#pragma once

#include <napi.h>

Napi::Value ReleaseExecutablePages(const Napi::CallbackInfo& info);
