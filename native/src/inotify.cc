#include "inotify.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace kts {
namespace {

constexpr uint32_t kMask = IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE |
                           IN_DELETE_SELF | IN_MOVED_FROM | IN_MOVE_SELF;
constexpr size_t kHeader = 1 + 4 + 4;
// If JS does not take batches (event loop stalled), stop gathering and report an overflow.
constexpr size_t kPendingCap = 8u << 20;
constexpr size_t kReadBuffer = 64u << 10;

void PutU32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

// Maps one inotify mask to the contract's event type; 0 when the bit is not one we report.
FsEventType TypeOf(uint32_t mask) {
  if (mask & (IN_CREATE)) return FsEventType::kCreate;
  if (mask & (IN_MOVED_FROM | IN_MOVED_TO | IN_MOVE_SELF)) return FsEventType::kRename;
  if (mask & (IN_DELETE | IN_DELETE_SELF | IN_UNMOUNT)) return FsEventType::kDelete;
  if (mask & (IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB)) return FsEventType::kModify;
  return static_cast<FsEventType>(0);
}

}  // namespace

std::unique_ptr<Inotify> Inotify::Create(int* err) {
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    return nullptr;
  }
  std::unique_ptr<Inotify> w(new Inotify(fd));
  if (!w->thread_.Open(err)) return nullptr;
  return w;
}

Inotify::~Inotify() { Close(); }

int Inotify::Start(Notify notify) { return thread_.Start(std::move(notify), [this] { Run(); }); }

int Inotify::Add(const std::string& path, uint32_t id) {
  std::lock_guard<std::mutex> lock(thread_.Mutex());
  if (fd_.get() < 0) return EBADF;
  int wd = inotify_add_watch(fd_.get(), path.c_str(), kMask);
  if (wd < 0) return errno;
  ids_by_wd_[wd].push_back(id);
  wd_by_id_[id] = wd;
  return 0;
}

void Inotify::Remove(uint32_t id) {
  std::lock_guard<std::mutex> lock(thread_.Mutex());
  auto it = wd_by_id_.find(id);
  if (it == wd_by_id_.end()) return;
  int wd = it->second;
  wd_by_id_.erase(it);
  auto w = ids_by_wd_.find(wd);
  if (w == ids_by_wd_.end()) return;
  auto& ids = w->second;
  ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
  if (ids.empty()) {
    ids_by_wd_.erase(w);
    // The kernel answers with IN_IGNORED for wd, which finds no ids and is dropped.
    if (fd_.get() >= 0) inotify_rm_watch(fd_.get(), wd);
  }
}

void Inotify::Close() {
  if (!thread_.Stop()) return;
  std::lock_guard<std::mutex> lock(thread_.Mutex());
  fd_.Reset();  // drops every watch
  ids_by_wd_.clear();
  wd_by_id_.clear();
}

std::vector<uint8_t> Inotify::TakeBatch() {
  return thread_.Take([this] {
    std::vector<uint8_t> out;
    out.swap(pending_);
    last_record_.clear();
    overflowed_ = false;
    return out;
  });
}

void Inotify::Run() {
  std::unique_ptr<char[]> buf(new char[kReadBuffer]);
  for (;;) {
    const int revents = thread_.Poll(fd_.get());
    if (revents == 0) return;  // Close()
    const char* failed = nullptr;
    int err = 0;
    ssize_t len = 0;
    if (revents < 0) {
      failed = "poll";
      err = -revents;
    } else if (revents & (POLLERR | POLLHUP | POLLNVAL)) {
      failed = "poll";
      err = EIO;
    } else {
      len = read(fd_.get(), buf.get(), kReadBuffer);
      if (len < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        failed = "read";
        err = errno;
      }
    }
    thread_.Publish([&] {
      if (failed != nullptr) {
        std::string msg = std::string("inotify ") + failed + ": " + strerror(err);
        Append(FsEventType::kError, 0, msg.data(), msg.size());
      } else {
        Dispatch(buf.get(), static_cast<size_t>(len));
      }
      return !pending_.empty();
    });
    if (failed != nullptr) return;
  }
}

void Inotify::Dispatch(const char* buf, size_t len) {
  size_t off = 0;
  while (off + sizeof(inotify_event) <= len) {
    inotify_event ev;
    std::memcpy(&ev, buf + off, sizeof ev);
    const char* name = buf + off + sizeof ev;
    size_t name_len = ev.len == 0 ? 0 : strnlen(name, std::min<size_t>(ev.len, len - off - sizeof ev));
    off += sizeof ev + ev.len;

    if (ev.mask & IN_Q_OVERFLOW) {
      Append(FsEventType::kOverflow, 0, nullptr, 0);
      continue;
    }
    auto w = ids_by_wd_.find(ev.wd);
    if (w == ids_by_wd_.end()) continue;  // removed by the caller; late events are dropped
    if (ev.mask & IN_IGNORED) {
      for (uint32_t id : w->second) {
        Append(FsEventType::kIgnored, id, nullptr, 0);
        wd_by_id_.erase(id);
      }
      ids_by_wd_.erase(w);
      continue;
    }
    FsEventType type = TypeOf(ev.mask);
    if (static_cast<uint8_t>(type) == 0) continue;
    for (uint32_t id : w->second) Append(type, id, name, name_len);
  }
}

void Inotify::Append(FsEventType type, uint32_t id, const char* name, size_t len) {
  if (overflowed_) return;
  if (pending_.size() + kHeader + len > kPendingCap) {
    overflowed_ = true;
    type = FsEventType::kOverflow;
    id = 0;
    len = 0;
  }
  uint8_t head[kHeader];
  head[0] = static_cast<uint8_t>(type);
  PutU32(head + 1, id);
  PutU32(head + 5, static_cast<uint32_t>(len));
  // inotify merges identical consecutive events; we also merge a path's repeats within a batch
  // when nothing else happened to it in between (IN_MODIFY then IN_CLOSE_WRITE, for one).
  auto last = last_record_.find(id);
  if (last != last_record_.end()) {
    const uint8_t* prev = pending_.data() + last->second;
    if (std::memcmp(prev, head, kHeader) == 0 && (len == 0 || std::memcmp(prev + kHeader, name, len) == 0)) return;
  }
  size_t at = pending_.size();
  last_record_[id] = at;
  pending_.resize(at + kHeader + len);
  uint8_t* p = pending_.data() + at;
  std::memcpy(p, head, kHeader);
  if (len != 0) std::memcpy(p + kHeader, name, len);
}

}  // namespace kts
