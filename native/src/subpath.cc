// See subpath.h. Every step mirrors src/volume/subpath/subpath-bind-ts.ts, so that both fail with the
// same step and errno on the same tree (test/native/subpath.contract.test.ts).
#include "subpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader_thread.h"  // UniqueFd

namespace kts {
namespace {

constexpr int kPathFlags = O_PATH | O_NOFOLLOW | O_CLOEXEC;

SubPathResult Fail(const char* step, int err, int component = -1) {
  SubPathResult r;
  r.err = err;
  r.step = step;
  r.component = component;
  return r;
}

// openat(dir, name, O_PATH | O_NOFOLLOW); a missing name is created as a directory first. A
// symlink opens as itself (O_PATH), and is refused here with ELOOP, as a plain O_NOFOLLOW open
// would be; `last` may be any non-symlink, the others must be directories.
SubPathResult OpenComponent(int dir, const std::string& name, mode_t mode, bool last, int index, UniqueFd* out) {
  int fd = openat(dir, name.c_str(), kPathFlags);
  if (fd < 0 && errno == ENOENT) {
    if (mkdirat(dir, name.c_str(), mode) != 0 && errno != EEXIST) return Fail("mkdir", errno, index);
    fd = openat(dir, name.c_str(), kPathFlags);
  }
  if (fd < 0) return Fail("open", errno, index);
  out->Reset(fd);
  struct stat st;
  if (fstat(fd, &st) != 0) return Fail("stat", errno, index);
  if (S_ISLNK(st.st_mode)) return Fail("open", ELOOP, index);
  if (!last && !S_ISDIR(st.st_mode)) return Fail("open", ENOTDIR, index);
  return SubPathResult{};
}

// The mount point, of the same kind as the source: a directory, or an empty file. One left by an
// earlier bind of the other kind (the volume changed) is replaced; it is unmounted by then.
int MakeTarget(const std::string& target, bool dir) {
  struct stat st;
  if (lstat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode) == dir && (dir || S_ISREG(st.st_mode))) return 0;
    if ((S_ISDIR(st.st_mode) ? rmdir(target.c_str()) : unlink(target.c_str())) != 0) return errno;
  } else if (errno != ENOENT) {
    return errno;
  }
  if (dir) return mkdir(target.c_str(), 0750) == 0 ? 0 : errno;
  int fd = open(target.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

}  // namespace

SubPathResult BindSubPath(const SubPathRequest& req) {
  UniqueFd current(open(req.base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (current.get() < 0) return Fail("open", errno);
  const int n = static_cast<int>(req.components.size());
  for (int i = 0; i < n; i++) {
    UniqueFd next;
    SubPathResult r = OpenComponent(current.get(), req.components[i], req.dir_mode, i == n - 1, i, &next);
    if (r.err != 0) return r;
    current.Reset(next.release());
  }
  struct stat source;
  if (fstat(current.get(), &source) != 0) return Fail("stat", errno);
  SubPathResult result;
  result.is_dir = S_ISDIR(source.st_mode);
  if (int err = MakeTarget(req.target, result.is_dir)) return Fail("target", err);
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", current.get());
  if (mount(proc, req.target.c_str(), nullptr, MS_BIND, nullptr) != 0) return Fail("mount", errno);
  // The mount must show the very inode that was opened; anything else is undone.
  struct stat bound;
  if (stat(req.target.c_str(), &bound) != 0 || bound.st_dev != source.st_dev || bound.st_ino != source.st_ino) {
    umount2(req.target.c_str(), MNT_DETACH);
    return Fail("verify", ESTALE);
  }
  return result;
}

}  // namespace kts
