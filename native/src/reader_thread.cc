// See reader_thread.h.
#include "reader_thread.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace kts {

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) {
    while (close(fd_) < 0 && errno == EINTR) {
    }
  }
  fd_ = fd;
}

bool ReaderThread::Open(int* err) {
  int wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake < 0) {
    *err = errno;
    return false;
  }
  wake_.Reset(wake);
  return true;
}

int ReaderThread::Start(Notify notify, std::function<void()> run) {
  notify_ = std::move(notify);
  run_ = std::move(run);
  // The reader never handles signals: block them all in the new thread (it inherits the mask).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(
      &thread_, nullptr,
      [](void* self) -> void* {
        static_cast<ReaderThread*>(self)->run_();
        return nullptr;
      },
      this);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  started_ = rc == 0;
  return rc;
}

bool ReaderThread::Stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (stopped_) return false;
  stopped_ = true;
  if (started_) {
    uint64_t one = 1;
    while (write(wake_.get(), &one, sizeof one) < 0 && errno == EINTR) {
    }
    pthread_join(thread_, nullptr);
    started_ = false;
  }
  wake_.Reset();
  return true;
}

int ReaderThread::Poll(int fd) {
  pollfd fds[2] = {{fd, POLLIN, 0}, {wake_.get(), POLLIN, 0}};
  for (;;) {
    int n = poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (fds[1].revents != 0) return 0;
    return fds[0].revents;
  }
}

bool ReaderThread::Sleep(int ms) {
  pollfd wake = {wake_.get(), POLLIN, 0};
  return poll(&wake, 1, ms) != 0;
}

}  // namespace kts
