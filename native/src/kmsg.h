// OOM watcher hot path: a reader thread on /dev/kmsg that parses the kernel's OOM-kill records
// and hands them to JS in batches. No N-API here: addon.cc converts. The TypeScript twin is
// src/oom/kmsg-ts.ts; both use the same parser rules (test/native/kmsg.contract.test.ts):
//
// - A read of /dev/kmsg returns one record "prio,seq,ts_us,flags[,...];message\n" followed by
//   continuation lines that start with a space. A buffer holding several records (a pipe in
//   tests) is split at every line that does not start with a space.
// - "oom-kill:constraint=C,...,oom_memcg=M,task_memcg=T,task=COMM,pid=N,uid=U" is a kill.
// - "... Killed process N (COMM) ..." is a kill too, unless it confirms the previous oom-kill
//   record (same pid); it then carries no memcg.
// - The reader thread (reader_thread.h) starts at the end (SEEK_END: no history), survives EPIPE
//   (records overwritten before we read them: counted, then reading goes on) and stops on Close().
#pragma once

#include <stdint.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reader_thread.h"

namespace kts {

struct KmsgRecord {
  uint64_t seq = 0;
  uint64_t ts_us = 0;
  std::string_view message;  // first line, without the trailing newline
};

// Parses one record's header and first line; false if it is not a kmsg record.
bool ParseKmsgRecord(std::string_view rec, KmsgRecord* out);

struct OomKill {
  uint64_t seq = 0;
  uint64_t ts_us = 0;
  int64_t pid = -1;
  std::string comm;
  std::string constraint;
  std::string oom_memcg;
  std::string task_memcg;
};

class OomLineParser {
 public:
  // True when the record is a (new) kill; *out is then filled.
  bool Feed(const KmsgRecord& rec, OomKill* out);

 private:
  int64_t last_pid_ = -1;
};

// Splits a buffer into records and runs them through the parser; appends kills to *out.
void ParseKmsgBuffer(std::string_view buf, OomLineParser* parser, std::vector<OomKill>* out);

class KmsgWatcher {
 public:
  using Notify = ReaderThread::Notify;
  // Opens `path` (normally /dev/kmsg) non-blocking and seeks to its end. nullptr + *err on failure.
  static std::unique_ptr<KmsgWatcher> Create(const std::string& path, int* err);
  ~KmsgWatcher();
  KmsgWatcher(const KmsgWatcher&) = delete;
  KmsgWatcher& operator=(const KmsgWatcher&) = delete;

  // Starts the reader thread (reader_thread.h). Returns 0 or an errno (then only Close() is useful).
  int Start(Notify notify);
  // Hands over every kill gathered since the last call; re-arms Notify.
  std::vector<OomKill> TakeBatch();
  // Records lost to EPIPE so far.
  uint64_t Lost();
  // Stops and joins the reader thread and closes the fds. Idempotent.
  void Close();

 private:
  explicit KmsgWatcher(int fd) : fd_(fd) {}
  void Run();

  ReaderThread thread_;
  UniqueFd fd_;  // closed by Close() once the reader thread is joined
  // Guarded by thread_.Mutex():
  std::vector<OomKill> pending_;
  uint64_t lost_ = 0;
};

}  // namespace kts
