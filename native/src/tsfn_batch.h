// The JS side of a hot path whose reader thread gathers batches (reader_thread.h): the core's
// Notify is a thread-safe function, unref'd so that a watcher left open does not keep the process
// alive, and each call hands the core's batch to the JS callback as ToJs(env, batch). Used by the
// wrapper classes in addon.cc (InotifyWatcher, KmsgWatcher); one TsfnBatch per JS object, on the
// JS thread only.
//
// Core: Start(Notify) -> 0 or an errno, Close() (idempotent), TakeBatch() -> a container.
// ToJs: napi_value (or a Napi::Value) from the batch; an empty value skips the call.
// Close() (the wrapper's close() and destructor, so GC too) and the thread-safe function's
// finalizer (environment teardown) both stop the reader thread.
#pragma once

#include <napi.h>

#include <memory>

namespace kts {

template <class Core, auto ToJs>
class TsfnBatch {
 public:
  TsfnBatch() = default;
  ~TsfnBatch() { Close(); }
  TsfnBatch(const TsfnBatch&) = delete;
  TsfnBatch& operator=(const TsfnBatch&) = delete;

  // Takes `core` and starts its reader thread, batches going to `callback`. 0: running. -1: the
  // thread-safe function could not be created and a JS exception is pending. Else the errno of
  // starting the thread: everything is closed again, and the caller throws.
  int Start(Napi::Env env, Napi::Function callback, const char* resource_name, std::unique_ptr<Core> core) {
    shared_ = std::make_shared<Shared>();
    shared_->core = std::move(core);
    tsfn_ = Tsfn::New(env, callback, resource_name, 0, 1, new Context(shared_), [](Napi::Env, void*, Context* ctx) {
      (*ctx)->tsfn_finalized = true;
      (*ctx)->core->Close();
      delete ctx;
    });
    if (env.IsExceptionPending()) return -1;
    live_tsfn_ = true;
    tsfn_.Unref(env);
    Tsfn tsfn = tsfn_;
    const int err = shared_->core->Start([tsfn]() { tsfn.NonBlockingCall(); });
    if (err != 0) Close();
    return err;
  }

  // The core given to Start() (still there after Close()), or null.
  Core* core() const { return shared_ ? shared_->core.get() : nullptr; }
  // Started and not closed.
  bool open() const { return shared_ && !closed_; }

  // Stops the reader thread (joined) and releases the thread-safe function. Idempotent.
  void Close() {
    if (!shared_ || closed_) return;
    closed_ = true;
    shared_->core->Close();
    if (live_tsfn_ && !shared_->tsfn_finalized) tsfn_.Release();
    live_tsfn_ = false;
  }

 private:
  struct Shared {
    std::unique_ptr<Core> core;
    bool tsfn_finalized = false;  // JS thread only
  };
  using Context = std::shared_ptr<Shared>;

  static void CallJs(Napi::Env env, Napi::Function callback, Context* ctx, void* /*data*/) {
    if (env == nullptr || ctx == nullptr) return;  // torn down with a call still queued
    auto batch = (*ctx)->core->TakeBatch();
    if (batch.empty()) return;
    // At environment teardown JS cannot run, and these calls just fail. A throw from the callback
    // stays pending and surfaces as an uncaught exception, as for any event.
    napi_value arg = ToJs(env, batch);
    if (arg == nullptr) return;
    napi_call_function(env, env.Undefined(), callback, 1, &arg, nullptr);
  }
  using Tsfn = Napi::TypedThreadSafeFunction<Context, void, CallJs>;

  Context shared_;
  Tsfn tsfn_;
  bool live_tsfn_ = false;
  bool closed_ = false;
};

}  // namespace kts
