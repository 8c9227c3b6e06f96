// kubelet_ts_native: registers the hot paths and converts values. The work lives in one file per
// hot path (inotify.cc, ...), free of N-API. Options are validated in TypeScript (src/native/);
// here we only refuse what would crash. No C++ exceptions: errors become JS exceptions or errno
// numbers returned to TypeScript, which turns them into Node-style errors.
#include <napi.h>
#include <string.h>

#include <memory>
#include <string>

#include "inotify.h"

namespace {

Napi::Error ErrnoError(Napi::Env env, const char* syscall, int err) {
  Napi::Error e = Napi::Error::New(env, std::string(syscall) + ": " + strerror(err));
  e.Set("errno", Napi::Number::New(env, err));
  e.Set("syscall", Napi::String::New(env, syscall));
  return e;
}

// ---- inotify --------------------------------------------------------------------------------
// new InotifyWatcher(onBatch: (records: Buffer) => void)
//   add(path: string, id: number): number   0 or an errno
//   remove(id: number): void
//   close(): void                           idempotent; joins the reader thread
// Record layout: see inotify.h. The thread-safe function is unref'd, so a watcher left open
// does not keep the process alive; GC of the wrapper stops the thread as close() would.

struct InotifyShared {
  std::unique_ptr<kts::Inotify> core;
  bool tsfn_finalized = false;  // JS thread only
};
using InotifyContext = std::shared_ptr<InotifyShared>;

void CallInotifyJs(Napi::Env env, Napi::Function callback, InotifyContext* ctx, void* /*data*/) {
  if (env == nullptr || ctx == nullptr) return;  // torn down with a call still queued
  std::vector<uint8_t> batch = (*ctx)->core->TakeBatch();
  if (batch.empty()) return;
  // Raw N-API: at environment teardown JS cannot run, and these calls just fail. A throw from
  // the callback stays pending and surfaces as an uncaught exception, as for any event.
  napi_value records;
  if (napi_create_buffer_copy(env, batch.size(), batch.data(), nullptr, &records) != napi_ok) return;
  napi_call_function(env, env.Undefined(), callback, 1, &records, nullptr);
}

using InotifyTsfn = Napi::TypedThreadSafeFunction<InotifyContext, void, CallInotifyJs>;

class InotifyWatcher : public Napi::ObjectWrap<InotifyWatcher> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "InotifyWatcher",
                       {
                           InstanceMethod<&InotifyWatcher::Add>("add"),
                           InstanceMethod<&InotifyWatcher::Remove>("remove"),
                           InstanceMethod<&InotifyWatcher::Close>("close"),
                       });
  }

  explicit InotifyWatcher(const Napi::CallbackInfo& info) : Napi::ObjectWrap<InotifyWatcher>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsFunction()) {
      Napi::TypeError::New(env, "InotifyWatcher: onBatch must be a function").ThrowAsJavaScriptException();
      return;
    }
    int err = 0;
    std::unique_ptr<kts::Inotify> core = kts::Inotify::Create(&err);
    if (!core) {
      ErrnoError(env, "inotify_init1", err).ThrowAsJavaScriptException();
      return;
    }
    shared_ = std::make_shared<InotifyShared>();
    shared_->core = std::move(core);
    tsfn_ = InotifyTsfn::New(env, info[0].As<Napi::Function>(), "kubelet_ts_inotify", 0, 1,
                             new InotifyContext(shared_), [](Napi::Env, void*, InotifyContext* ctx) {
                               (*ctx)->tsfn_finalized = true;
                               (*ctx)->core->Close();
                               delete ctx;
                             });
    if (env.IsExceptionPending()) return;
    live_tsfn_ = true;
    tsfn_.Unref(env);
    InotifyTsfn tsfn = tsfn_;
    err = shared_->core->Start([tsfn]() { tsfn.NonBlockingCall(); });
    if (err != 0) {
      Shutdown();
      ErrnoError(env, "pthread_create", err).ThrowAsJavaScriptException();
    }
  }

  ~InotifyWatcher() override { Shutdown(); }

 private:
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString() || !info[1].IsNumber()) {
      Napi::TypeError::New(env, "add(path: string, id: number)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (!shared_ || closed_) return Napi::Number::New(env, EBADF);
    std::string path = info[0].As<Napi::String>().Utf8Value();
    uint32_t id = info[1].As<Napi::Number>().Uint32Value();
    return Napi::Number::New(env, shared_->core->Add(path, id));
  }

  Napi::Value Remove(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (shared_ && !closed_ && info[0].IsNumber()) shared_->core->Remove(info[0].As<Napi::Number>().Uint32Value());
    return env.Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    Shutdown();
    return info.Env().Undefined();
  }

  void Shutdown() {
    closed_ = true;
    if (!shared_) return;
    shared_->core->Close();
    if (live_tsfn_ && !shared_->tsfn_finalized) tsfn_.Release();
    live_tsfn_ = false;
  }

  InotifyContext shared_;
  InotifyTsfn tsfn_;
  bool live_tsfn_ = false;
  bool closed_ = false;
};

// ---- registration ---------------------------------------------------------------------------

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("InotifyWatcher", InotifyWatcher::Define(env));
  return exports;
}

}  // namespace

NODE_API_MODULE(kubelet_ts_native, Init)
