// mallocTrim(): hands the pages of freed malloc memory back to the kernel (glibc malloc_trim).
#pragma once

#include <napi.h>

Napi::Value MallocTrim(const Napi::CallbackInfo& info);
