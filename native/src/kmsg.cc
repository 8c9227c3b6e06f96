// See kmsg.h.
#include "kmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace kts {
namespace {

bool ParseU64(std::string_view s, uint64_t* v) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t x = 0;
  for (char c : s) {
    unsigned d = static_cast<unsigned char>(c) - '0';
    if (d > 9 || x > (~uint64_t{0} - d) / 10) return false;
    x = x * 10 + d;
  }
  *v = x;
  return true;
}

// Value of "key=" in a comma-separated list; the last key wins, as later fields may repeat.
std::string_view Field(std::string_view list, std::string_view key) {
  std::string_view found;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string_view::npos) end = list.size();
    std::string_view item = list.substr(pos, end - pos);
    if (item.size() > key.size() && item.substr(0, key.size()) == key && item[key.size()] == '=') {
      found = item.substr(key.size() + 1);
    }
    pos = end + 1;
  }
  return found;
}

bool ParsePid(std::string_view s, int64_t* pid) {
  uint64_t v;
  if (!ParseU64(s, &v) || v > INT32_MAX) return false;
  *pid = static_cast<int64_t>(v);
  return true;
}

}  // namespace

bool ParseKmsgRecord(std::string_view rec, KmsgRecord* out) {
  size_t semi = rec.find(';');
  if (semi == std::string_view::npos) return false;
  std::string_view header = rec.substr(0, semi);
  std::string_view f[3];
  size_t pos = 0;
  for (int i = 0; i < 3; i++) {
    size_t c = header.find(',', pos);
    if (c == std::string_view::npos) {
      if (i < 2) return false;
      c = header.size();
    }
    f[i] = header.substr(pos, c - pos);
    pos = c + 1;
    if (pos > header.size() && i < 2) return false;
  }
  uint64_t prio;
  if (!ParseU64(f[0], &prio) || !ParseU64(f[1], &out->seq) || !ParseU64(f[2], &out->ts_us)) return false;
  std::string_view msg = rec.substr(semi + 1);
  size_t nl = msg.find('\n');
  out->message = nl == std::string_view::npos ? msg : msg.substr(0, nl);
  return true;
}

bool OomLineParser::Feed(const KmsgRecord& rec, OomKill* out) {
  std::string_view m = rec.message;
  constexpr std::string_view kOomKill = "oom-kill:";
  if (m.substr(0, kOomKill.size()) == kOomKill) {
    std::string_view list = m.substr(kOomKill.size());
    int64_t pid;
    if (!ParsePid(Field(list, "pid"), &pid)) return false;
    *out = OomKill{};
    out->seq = rec.seq;
    out->ts_us = rec.ts_us;
    out->pid = pid;
    out->comm = std::string(Field(list, "task"));
    out->constraint = std::string(Field(list, "constraint"));
    out->oom_memcg = std::string(Field(list, "oom_memcg"));
    out->task_memcg = std::string(Field(list, "task_memcg"));
    last_pid_ = pid;
    return true;
  }
  constexpr std::string_view kKilled = "Killed process ";
  size_t k = m.find(kKilled);
  if (k == std::string_view::npos) return false;
  std::string_view rest = m.substr(k + kKilled.size());
  size_t sp = rest.find(' ');
  int64_t pid;
  if (!ParsePid(rest.substr(0, sp), &pid)) return false;
  if (pid == last_pid_) {
    last_pid_ = -1;  // the confirmation of the oom-kill record just reported
    return false;
  }
  *out = OomKill{};
  out->seq = rec.seq;
  out->ts_us = rec.ts_us;
  out->pid = pid;
  if (sp != std::string_view::npos && sp + 1 < rest.size() && rest[sp + 1] == '(') {
    std::string_view c = rest.substr(sp + 2);
    size_t close = c.rfind(')');
    out->comm = std::string(close == std::string_view::npos ? c : c.substr(0, close));
  }
  return true;
}

void ParseKmsgBuffer(std::string_view buf, OomLineParser* parser, std::vector<OomKill>* out) {
  size_t pos = 0;
  while (pos < buf.size()) {
    size_t end = pos;
    // A record runs to the first newline followed by something other than a continuation.
    for (;;) {
      size_t nl = buf.find('\n', end);
      if (nl == std::string_view::npos) { end = buf.size(); break; }
      end = nl + 1;
      if (end >= buf.size() || buf[end] != ' ') break;
    }
    KmsgRecord rec;
    OomKill kill;
    if (ParseKmsgRecord(buf.substr(pos, end - pos), &rec) && parser->Feed(rec, &kill)) out->push_back(std::move(kill));
    pos = end;
  }
}

std::unique_ptr<KmsgWatcher> KmsgWatcher::Create(const std::string& path, int* err) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    return nullptr;
  }
  // History is not ours to report; a FIFO (tests) cannot seek and needs nothing skipped.
  lseek(fd, 0, SEEK_END);
  std::unique_ptr<KmsgWatcher> w(new KmsgWatcher(fd));
  if (!w->thread_.Open(err)) return nullptr;
  return w;
}

KmsgWatcher::~KmsgWatcher() { Close(); }

int KmsgWatcher::Start(Notify notify) { return thread_.Start(std::move(notify), [this] { Run(); }); }

void KmsgWatcher::Run() {
  OomLineParser parser;
  std::vector<char> buf(16384);
  for (;;) {
    std::vector<OomKill> kills;
    for (;;) {
      ssize_t n = read(fd_.get(), buf.data(), buf.size());
      if (n > 0) {
        ParseKmsgBuffer(std::string_view(buf.data(), static_cast<size_t>(n)), &parser, &kills);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EPIPE) {  // overwritten before we read it; the next read goes on
        std::lock_guard<std::mutex> lock(thread_.Mutex());
        lost_++;
        continue;
      }
      break;  // EAGAIN, EOF (a FIFO whose writer left) or an error: wait for more
    }
    if (!kills.empty()) {
      thread_.Publish([&] {
        for (OomKill& k : kills) pending_.push_back(std::move(k));
        return true;
      });
    }
    const int revents = thread_.Poll(fd_.get());
    if (revents <= 0) return;  // Close(), or poll() failed
    if (revents & (POLLHUP | POLLERR | POLLNVAL) && !(revents & POLLIN)) {
      // A FIFO without a writer keeps reporting POLLHUP: back off instead of spinning.
      if (thread_.Sleep(50)) return;
    }
  }
}

std::vector<OomKill> KmsgWatcher::TakeBatch() {
  return thread_.Take([this] {
    std::vector<OomKill> out;
    out.swap(pending_);
    return out;
  });
}

uint64_t KmsgWatcher::Lost() {
  std::lock_guard<std::mutex> lock(thread_.Mutex());
  return lost_;
}

void KmsgWatcher::Close() {
  if (thread_.Stop()) fd_.Reset();
}

}  // namespace kts
