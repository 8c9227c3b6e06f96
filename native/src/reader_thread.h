// The reader thread of the hot paths that watch a file descriptor (inotify.cc, kmsg.cc): a thread
// blocked in poll() on the fd and a wake eventfd, whose owner gathers what it reads into a batch
// and signals JS once per batch. No N-API here: Notify is how addon.cc (tsfn_batch.h) hears that
// a batch is ready; JS then takes it on its own thread.
//
//   owner (any thread)                       reader thread (owner's Run())
//   Create: Open(&err)                       for (;;) {
//   Start(notify, [this] { Run(); })           int revents = Poll(fd);  // 0: Stop()
//   TakeBatch: Take([&] { swap batch })        read; Publish([&] { add to batch; return !empty; })
//   Close: if (Stop()) close the fd          }
#pragma once

#include <pthread.h>

#include <functional>
#include <mutex>

namespace kts {

// Owns one file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }
  int get() const { return fd_; }
  // Gives up ownership: the caller closes the fd returned.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the fd held (if any) and holds `fd`.
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

class ReaderThread {
 public:
  // Called on the reader thread when a batch becomes ready and none is already scheduled. The
  // receiver must eventually call the owner's TakeBatch() (Take()) on its own thread.
  using Notify = std::function<void()>;

  ReaderThread() = default;
  ~ReaderThread() { Stop(); }
  ReaderThread(const ReaderThread&) = delete;
  ReaderThread& operator=(const ReaderThread&) = delete;

  // Opens the wake eventfd. False (*err: the errno) on failure.
  bool Open(int* err);
  // Runs `run` on a new thread that blocks every signal. 0 or an errno (then only Stop() is
  // useful).
  int Start(Notify notify, std::function<void()> run);
  // Wakes the thread (its Poll() returns 0), joins it and closes the wake fd. True for the call
  // that did so; any other call returns false once that one has finished, so an owner closes its
  // own fds after a true Stop() only. Idempotent; thread-safe.
  bool Stop();

  // On the reader thread. Blocks until `fd` has an event (POLLIN) or Stop(), retrying EINTR.
  // > 0: the fd's revents; 0: Stop() was called; < 0: -errno of a failed poll().
  int Poll(int fd);
  // Waits `ms` milliseconds unless Stop() comes first: true when it did (or poll() failed).
  bool Sleep(int ms);
  // Under Mutex(): add() adds what was read to the owner's batch and says whether the batch holds
  // anything. The first publish of a batch calls Notify (after the lock is released).
  template <class Add>
  void Publish(Add add) {
    bool notify = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (add() && !scheduled_) {
        scheduled_ = true;
        notify = true;
      }
    }
    if (notify) notify_();
  }

  // On the owner's side: under Mutex(), take() hands over the batch; the next Publish() notifies
  // again.
  template <class TakeFn>
  auto Take(TakeFn take) -> decltype(take()) {
    std::lock_guard<std::mutex> lock(mu_);
    scheduled_ = false;
    return take();
  }
  // Guards the owner's batch and anything else the owner shares with its reader thread.
  std::mutex& Mutex() { return mu_; }

 private:
  UniqueFd wake_;
  pthread_t thread_{};
  bool started_ = false;
  Notify notify_;
  std::function<void()> run_;
  std::mutex stop_mu_;
  bool stopped_ = false;  // stop_mu_
  std::mutex mu_;
  bool scheduled_ = false;  // mu_: Notify called, Take() not yet
};

}  // namespace kts
