// inotify hot path: one inotify fd per watcher, read on a dedicated thread (reader_thread.h),
// events packed into a flat byte buffer that the JS thread takes in one piece. No N-API here:
// addon.cc converts.
//
// Record layout (little-endian), repeated:
//   u8 type | u32 id | u32 name_len | name bytes (UTF-8 as the kernel gave them, no NUL)
// `id` is the number the caller passed to Add() for the watched path (0 for overflow/error).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "reader_thread.h"

namespace kts {

enum class FsEventType : uint8_t {
  kCreate = 1,
  kModify = 2,
  kDelete = 3,
  kRename = 4,
  kOverflow = 5,
  kIgnored = 6,  // the kernel dropped the watch (path deleted or unmounted); internal
  kError = 7,    // the reader thread stopped on an error; name holds the message; internal
};

class Inotify {
 public:
  using Notify = ReaderThread::Notify;

  // Opens the inotify fd and the shutdown eventfd. Returns nullptr and sets *err (errno) on
  // failure. The reader thread starts with Start().
  static std::unique_ptr<Inotify> Create(int* err);
  ~Inotify();
  Inotify(const Inotify&) = delete;
  Inotify& operator=(const Inotify&) = delete;

  // Starts the reader thread. Returns 0 or an errno (then only Close() is useful).
  int Start(Notify notify);
  // Watches `path` (a directory's entries or a single file) under `id`. Returns 0 or an errno.
  int Add(const std::string& path, uint32_t id);
  // Stops watching under `id`; the inotify watch goes when no other id shares its inode.
  void Remove(uint32_t id);
  // Stops and joins the reader thread and closes the fds. Idempotent.
  void Close();
  // Hands over every record gathered since the last call; re-arms Notify.
  std::vector<uint8_t> TakeBatch();

 private:
  explicit Inotify(int fd) : fd_(fd) {}
  void Run();
  void Dispatch(const char* buf, size_t len);                               // Mutex() held
  void Append(FsEventType type, uint32_t id, const char* name, size_t len);  // Mutex() held

  ReaderThread thread_;
  UniqueFd fd_;  // closed by Close() once the reader thread is joined, under thread_.Mutex()
  // Guarded by thread_.Mutex():
  std::unordered_map<int, std::vector<uint32_t>> ids_by_wd_;
  std::unordered_map<uint32_t, int> wd_by_id_;
  std::vector<uint8_t> pending_;
  std::unordered_map<uint32_t, size_t> last_record_;  // id -> offset of its last record in pending_
  bool overflowed_ = false;        // pending_ hit its cap; an overflow record is queued
};

}  // namespace kts
