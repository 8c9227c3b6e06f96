// kubelet_ts_native: registers the hot paths and converts values. The work lives in one file per
// hot path (inotify.cc, ...), free of N-API. Options are validated in TypeScript (src/native/);
// here we only refuse what would crash. No C++ exceptions: errors become JS exceptions or errno
// numbers returned to TypeScript, which turns them into Node-style errors.
#include <napi.h>
#include <string.h>

#include <memory>
#include <string>

#include "cgroup_stats.h"
#include "inotify.h"
#include "kmsg.h"
#include "malloc_trim.h"
#include "pleg.h"
#include "subpath.h"
#include "tsfn_batch.h"

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

// The records as one Buffer (raw N-API: at environment teardown this just fails).
napi_value RecordsToJs(Napi::Env env, const std::vector<uint8_t>& batch) {
  napi_value records;
  if (napi_create_buffer_copy(env, batch.size(), batch.data(), nullptr, &records) != napi_ok) return nullptr;
  return records;
}

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
    err = watcher_.Start(env, info[0].As<Napi::Function>(), "kubelet_ts_inotify", std::move(core));
    if (err > 0) ErrnoError(env, "pthread_create", err).ThrowAsJavaScriptException();
  }

 private:
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString() || !info[1].IsNumber()) {
      Napi::TypeError::New(env, "add(path: string, id: number)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (!watcher_.open()) return Napi::Number::New(env, EBADF);
    std::string path = info[0].As<Napi::String>().Utf8Value();
    uint32_t id = info[1].As<Napi::Number>().Uint32Value();
    return Napi::Number::New(env, watcher_.core()->Add(path, id));
  }

  Napi::Value Remove(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (watcher_.open() && info[0].IsNumber()) watcher_.core()->Remove(info[0].As<Napi::Number>().Uint32Value());
    return env.Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    watcher_.Close();
    return info.Env().Undefined();
  }

  kts::TsfnBatch<kts::Inotify, RecordsToJs> watcher_;
};

// ---- pleg -----------------------------------------------------------------------------------
// new RelistDiffer()
//   diff(sandboxes: Uint8Array, containers: Uint8Array): Buffer | string
//       the raw ListPodSandboxResponse / ListContainersResponse bytes; a Buffer laid out as in
//       pleg.h, or the decode error's message (the retained state is then unchanged)
//   podInfo(uid: string): [name, namespace] | undefined
//   keepPrevious(uids: string[]): void
//   reset(): void
//   close(): void          frees the retained state; diff() afterwards throws

class PlegRelistDiffer : public Napi::ObjectWrap<PlegRelistDiffer> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "RelistDiffer",
                       {
                           InstanceMethod<&PlegRelistDiffer::Diff>("diff"),
                           InstanceMethod<&PlegRelistDiffer::PodInfo>("podInfo"),
                           InstanceMethod<&PlegRelistDiffer::KeepPrevious>("keepPrevious"),
                           InstanceMethod<&PlegRelistDiffer::Reset>("reset"),
                           InstanceMethod<&PlegRelistDiffer::Close>("close"),
                       });
  }

  explicit PlegRelistDiffer(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<PlegRelistDiffer>(info), core_(std::make_unique<kts::pleg::RelistDiffer>()) {}

 private:
  static bool Bytes(const Napi::Value& v, const uint8_t** data, size_t* len) {
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) return false;
    Napi::Uint8Array a = v.As<Napi::Uint8Array>();
    *data = a.Data();
    *len = a.ElementLength();
    return true;
  }

  Napi::Value Diff(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const uint8_t *sb = nullptr, *ct = nullptr;
    size_t sb_len = 0, ct_len = 0;
    if (!Bytes(info[0], &sb, &sb_len) || !Bytes(info[1], &ct, &ct_len)) {
      Napi::TypeError::New(env, "diff(sandboxes: Uint8Array, containers: Uint8Array)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (!core_) {
      Napi::Error::New(env, "RelistDiffer is closed").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    std::string error;
    if (!core_->Diff(sb, sb_len, ct, ct_len, &error)) return Napi::String::New(env, error);
    const std::vector<uint8_t>& out = core_->Output();
    return Napi::Buffer<uint8_t>::Copy(env, out.data(), out.size());
  }

  Napi::Value PodInfo(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString() || !core_) return env.Undefined();
    std::string uid = info[0].As<Napi::String>().Utf8Value();
    std::string_view name, ns;
    if (!core_->PodInfo(uid, &name, &ns)) return env.Undefined();
    Napi::Array out = Napi::Array::New(env, 2);
    out.Set(0u, Napi::String::New(env, name.data(), name.size()));
    out.Set(1u, Napi::String::New(env, ns.data(), ns.size()));
    return out;
  }

  Napi::Value KeepPrevious(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsArray()) {
      Napi::TypeError::New(env, "keepPrevious(uids: string[])").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    if (!core_) return env.Undefined();
    Napi::Array uids = info[0].As<Napi::Array>();
    for (uint32_t i = 0; i < uids.Length(); i++) {
      Napi::Value v = uids.Get(i);
      if (env.IsExceptionPending()) return env.Undefined();
      if (v.IsString()) core_->KeepPrevious(v.As<Napi::String>().Utf8Value());
    }
    return env.Undefined();
  }

  Napi::Value Reset(const Napi::CallbackInfo& info) {
    if (core_) core_->Reset();
    return info.Env().Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    core_.reset();
    return info.Env().Undefined();
  }

  std::unique_ptr<kts::pleg::RelistDiffer> core_;
};

// ---- cgroup stats ---------------------------------------------------------------------------
// new CgroupReader()
//   setFiles(paths: string[], meta: Uint32Array)   meta = [kind, group, slot, need] per path
//   read(out: BigUint64Array, mask?: number): number   fills out from the files mask wants
//                                                  (see cgroup_stats.h); files read
//   readAsync(out, mask?): Promise<number>        the same read on the libuv pool: the pass's
//                                                  ~3,000 preads (10+ ms of kernel time at 500
//                                                  containers) leave the event loop free. Until it
//                                                  settles, out is the worker's and setFiles, read
//                                                  and readAsync throw; close waits for it.
//   parse(kind: number, slot: number, text: Buffer, out: BigUint64Array): void   (tests, fuzz parity)
//   close(): void

bool BigU64Out(const Napi::Value& v, uint64_t** data, size_t* len) {
  if (!v.IsTypedArray()) return false;
  Napi::TypedArray ta = v.As<Napi::TypedArray>();
  if (ta.TypedArrayType() != napi_biguint64_array) return false;
  *data = reinterpret_cast<uint64_t*>(static_cast<uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset());
  *len = ta.ElementLength();
  return true;
}

class CgroupStatsReader : public Napi::ObjectWrap<CgroupStatsReader> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "CgroupReader",
                       {
                           InstanceMethod<&CgroupStatsReader::SetFiles>("setFiles"),
                           InstanceMethod<&CgroupStatsReader::Read>("read"),
                           InstanceMethod<&CgroupStatsReader::ReadAsync>("readAsync"),
                           InstanceMethod<&CgroupStatsReader::Parse>("parse"),
                           InstanceMethod<&CgroupStatsReader::Close>("close"),
                       });
  }
  explicit CgroupStatsReader(const Napi::CallbackInfo& info) : Napi::ObjectWrap<CgroupStatsReader>(info) {}

 private:
  class ReadWorker;

  // Throws (and returns true) while a readAsync owns the reader.
  bool Busy(Napi::Env env, const char* method) {
    if (!busy_) return false;
    Napi::Error::New(env, std::string("CgroupReader.") + method + ": a readAsync() is in progress; await it first")
        .ThrowAsJavaScriptException();
    return true;
  }

  Napi::Value SetFiles(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (Busy(env, "setFiles")) return env.Undefined();
    if (!info[0].IsArray() || !info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array) {
      Napi::TypeError::New(env, "setFiles(paths: string[], meta: Uint32Array)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    Napi::Array paths = info[0].As<Napi::Array>();
    Napi::Uint32Array meta = info[1].As<Napi::Uint32Array>();
    uint32_t n = paths.Length();
    if (meta.ElementLength() != static_cast<size_t>(n) * 4) {
      Napi::RangeError::New(env, "setFiles: meta must hold 4 numbers per path").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    std::vector<kts::CgroupReader::Spec> specs;
    specs.reserve(n);
    for (uint32_t i = 0; i < n; i++) {
      Napi::Value p = paths[i];
      if (!p.IsString()) {
        Napi::TypeError::New(env, "setFiles: paths must be strings").ThrowAsJavaScriptException();
        return env.Undefined();
      }
      specs.push_back({p.As<Napi::String>().Utf8Value(), static_cast<uint8_t>(meta[i * 4]), meta[i * 4 + 1], meta[i * 4 + 2], meta[i * 4 + 3]});
    }
    reader_.SetFiles(std::move(specs));
    return env.Undefined();
  }

  // The arguments of read and readAsync: (out: BigUint64Array, mask?: number). False, having
  // thrown, when they are wrong or a readAsync owns the reader.
  bool ReadArgs(const Napi::CallbackInfo& info, const char* method, uint64_t** out, size_t* len, uint32_t* mask) {
    if (!BigU64Out(info[0], out, len)) {
      Napi::TypeError::New(info.Env(), std::string(method) + "(out: BigUint64Array, mask?: number)").ThrowAsJavaScriptException();
      return false;
    }
    if (Busy(info.Env(), method)) return false;
    *mask = info[1].IsNumber() ? info[1].As<Napi::Number>().Uint32Value() : ~uint32_t{0};
    return true;
  }

  Napi::Value Read(const Napi::CallbackInfo& info) {
    uint64_t* out;
    size_t len;
    uint32_t mask;
    if (!ReadArgs(info, "read", &out, &len, &mask)) return info.Env().Undefined();
    return Napi::Number::New(info.Env(), static_cast<double>(reader_.Read(out, len, mask)));
  }

  Napi::Value ReadAsync(const Napi::CallbackInfo& info);

  Napi::Value Parse(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    uint64_t* out;
    size_t len;
    if (!info[0].IsNumber() || !info[1].IsNumber() || !info[2].IsBuffer() || !BigU64Out(info[3], &out, &len) || len < kts::kFields) {
      Napi::TypeError::New(env, "parse(kind, slot, text: Buffer, out: BigUint64Array)").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    Napi::Buffer<char> text = info[2].As<Napi::Buffer<char>>();
    kts::ParseCgroupFile(static_cast<uint8_t>(info[0].As<Napi::Number>().Uint32Value()), info[1].As<Napi::Number>().Uint32Value(),
                         text.Data(), text.Length(), out);
    return env.Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (busy_)
      close_pending_ = true;  // the worker still reads these fds: it closes them when done
    else
      reader_.Close();
    return info.Env().Undefined();
  }

  void Settled() {
    busy_ = false;
    if (close_pending_) reader_.Close();
    close_pending_ = false;
  }

  kts::CgroupReader reader_;
  bool busy_ = false;
  bool close_pending_ = false;
};

// One readAsync: Read() on the libuv pool. The worker holds the reader's JS object and out, so
// neither is collected while it runs; busy_ keeps the main thread off both.
class CgroupStatsReader::ReadWorker : public Napi::AsyncWorker {
 public:
  ReadWorker(Napi::Object self, CgroupStatsReader* owner, Napi::Object out, uint64_t* data, size_t len, uint32_t mask)
      : Napi::AsyncWorker(self.Env(), "kubelet_ts_cgroup_read"),
        self_(Napi::Persistent(self)),
        owner_(owner),
        out_(Napi::Persistent(out)),
        data_(data),
        len_(len),
        mask_(mask),
        deferred_(Napi::Promise::Deferred::New(self.Env())) {}
  Napi::Promise Promise() { return deferred_.Promise(); }

 protected:
  void Execute() override { files_ = owner_->reader_.Read(data_, len_, mask_); }
  void OnOK() override {
    owner_->Settled();
    deferred_.Resolve(Napi::Number::New(Env(), static_cast<double>(files_)));
  }

 private:
  Napi::ObjectReference self_;
  CgroupStatsReader* owner_;
  Napi::ObjectReference out_;
  uint64_t* data_;
  size_t len_;
  uint32_t mask_;
  size_t files_ = 0;
  Napi::Promise::Deferred deferred_;
};

Napi::Value CgroupStatsReader::ReadAsync(const Napi::CallbackInfo& info) {
  uint64_t* out;
  size_t len;
  uint32_t mask;
  if (!ReadArgs(info, "readAsync", &out, &len, &mask)) return info.Env().Undefined();
  // node-addon-api deletes the worker after OnOK.
  auto* worker = new ReadWorker(info.This().As<Napi::Object>(), this, info[0].As<Napi::Object>(), out, len, mask);
  busy_ = true;
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

// ---- kmsg OOM watcher -----------------------------------------------------------------------
// new KmsgWatcher(path: string, onKills: (kills: OomKillRecord[]) => void)
//   lost(): number       records lost to EPIPE
//   close(): void        idempotent; joins the reader thread
// parseKmsg(buf: Buffer): OomKillRecord[]   the same parser on a buffer (tests)
// OomKillRecord = { seq, tsUs, pid, comm, constraint, oomMemcg, taskMemcg }

Napi::Array KillsToJs(Napi::Env env, const std::vector<kts::OomKill>& kills) {
  Napi::Array arr = Napi::Array::New(env, kills.size());
  for (size_t i = 0; i < kills.size(); i++) {
    const kts::OomKill& k = kills[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("seq", Napi::Number::New(env, static_cast<double>(k.seq)));
    o.Set("tsUs", Napi::Number::New(env, static_cast<double>(k.ts_us)));
    o.Set("pid", Napi::Number::New(env, static_cast<double>(k.pid)));
    o.Set("comm", Napi::String::New(env, k.comm));
    o.Set("constraint", Napi::String::New(env, k.constraint));
    o.Set("oomMemcg", Napi::String::New(env, k.oom_memcg));
    o.Set("taskMemcg", Napi::String::New(env, k.task_memcg));
    arr[static_cast<uint32_t>(i)] = o;
  }
  return arr;
}

class KmsgWatcherWrap : public Napi::ObjectWrap<KmsgWatcherWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "KmsgWatcher",
                       {
                           InstanceMethod<&KmsgWatcherWrap::Lost>("lost"),
                           InstanceMethod<&KmsgWatcherWrap::Close>("close"),
                       });
  }

  explicit KmsgWatcherWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<KmsgWatcherWrap>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString() || !info[1].IsFunction()) {
      Napi::TypeError::New(env, "KmsgWatcher(path: string, onKills: function)").ThrowAsJavaScriptException();
      return;
    }
    int err = 0;
    std::unique_ptr<kts::KmsgWatcher> core = kts::KmsgWatcher::Create(info[0].As<Napi::String>().Utf8Value(), &err);
    if (!core) {
      ErrnoError(env, "open", err).ThrowAsJavaScriptException();
      return;
    }
    err = watcher_.Start(env, info[1].As<Napi::Function>(), "kubelet_ts_kmsg", std::move(core));
    if (err > 0) ErrnoError(env, "pthread_create", err).ThrowAsJavaScriptException();
  }

 private:
  Napi::Value Lost(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), watcher_.core() ? static_cast<double>(watcher_.core()->Lost()) : 0);
  }
  Napi::Value Close(const Napi::CallbackInfo& info) {
    watcher_.Close();
    return info.Env().Undefined();
  }

  kts::TsfnBatch<kts::KmsgWatcher, KillsToJs> watcher_;
};

Napi::Value ParseKmsg(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsBuffer()) {
    Napi::TypeError::New(env, "parseKmsg(buf: Buffer)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Buffer<char> buf = info[0].As<Napi::Buffer<char>>();
  kts::OomLineParser parser;
  std::vector<kts::OomKill> kills;
  kts::ParseKmsgBuffer(std::string_view(buf.Data(), buf.Length()), &parser, &kills);
  return KillsToJs(env, kills);
}

// ---- subPath bind -----------------------------------------------------------------------------
// bindSubPath(base: string, components: string[], target: string, dirMode: number)
//   => Promise<{ isDir: boolean } | { errno: number, step: string, component: number }>
// The walk, mkdir and mount block, so they run on the libuv pool (AsyncWorker). Failures resolve
// (not reject) with the errno and step: TypeScript turns them into Node-style errors.

class SubPathWorker : public Napi::AsyncWorker {
 public:
  SubPathWorker(Napi::Env env, kts::SubPathRequest req)
      : Napi::AsyncWorker(env, "kubelet_ts_subpath"), req_(std::move(req)), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise Promise() { return deferred_.Promise(); }

 protected:
  void Execute() override { result_ = kts::BindSubPath(req_); }
  void OnOK() override {
    Napi::Env env = Env();
    Napi::Object out = Napi::Object::New(env);
    if (result_.err == 0) {
      out.Set("isDir", Napi::Boolean::New(env, result_.is_dir));
    } else {
      out.Set("errno", Napi::Number::New(env, result_.err));
      out.Set("step", Napi::String::New(env, result_.step));
      out.Set("component", Napi::Number::New(env, result_.component));
    }
    deferred_.Resolve(out);
  }

 private:
  kts::SubPathRequest req_;
  kts::SubPathResult result_;
  Napi::Promise::Deferred deferred_;
};

Napi::Value BindSubPath(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsString() || !info[1].IsArray() || !info[2].IsString() || !info[3].IsNumber()) {
    Napi::TypeError::New(env, "bindSubPath(base: string, components: string[], target: string, dirMode: number)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  kts::SubPathRequest req;
  req.base = info[0].As<Napi::String>().Utf8Value();
  req.target = info[2].As<Napi::String>().Utf8Value();
  req.dir_mode = static_cast<mode_t>(info[3].As<Napi::Number>().Uint32Value() & 07777);
  Napi::Array comps = info[1].As<Napi::Array>();
  for (uint32_t i = 0; i < comps.Length(); i++) {
    Napi::Value c = comps.Get(i);
    if (!c.IsString()) {
      Napi::TypeError::New(env, "bindSubPath: components must be strings").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    req.components.push_back(c.As<Napi::String>().Utf8Value());
  }
  auto* worker = new SubPathWorker(env, std::move(req));  // deletes itself after OnOK
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

// ---- registration ---------------------------------------------------------------------------

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("InotifyWatcher", InotifyWatcher::Define(env));
  exports.Set("RelistDiffer", PlegRelistDiffer::Define(env));
  exports.Set("CgroupReader", CgroupStatsReader::Define(env));
  exports.Set("KmsgWatcher", KmsgWatcherWrap::Define(env));
  exports.Set("parseKmsg", Napi::Function::New(env, ParseKmsg, "parseKmsg"));
  exports.Set("bindSubPath", Napi::Function::New(env, BindSubPath, "bindSubPath"));
  exports.Set("mallocTrim", Napi::Function::New(env, MallocTrim, "mallocTrim"));
  return exports;
}

}  // namespace

NODE_API_MODULE(kubelet_ts_native, Init)
