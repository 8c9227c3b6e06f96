// Safe subPath bind (upstream's fix for CVE-2017-1002101 / CVE-2021-25741, pkg/volume/util/subpath):
// open a path below a volume one component at a time with openat(O_PATH | O_NOFOLLOW), so that
// no symlink is followed however the tree changes meanwhile, and bind-mount what was opened
// (through /proc/self/fd/<fd>, which names the open file, not a path) onto a kubelet-owned
// target that is handed to the runtime. No N-API here; the TS twin is
// src/volume/subpath/subpath-bind-ts.ts and the contract is in src/volume/subpath/subpath-types.ts.
#ifndef KUBELET_TS_SUBPATH_H_
#define KUBELET_TS_SUBPATH_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace kts {

struct SubPathRequest {
  std::string base;                     // the volume root, already resolved (trusted)
  std::vector<std::string> components;  // single names: no "/", not "", "." or ".."
  std::string target;                   // kubelet-owned mount point (its parent exists)
  mode_t dir_mode = 0750;               // for directories created on the way
};

struct SubPathResult {
  bool is_dir = false;  // what was bound: a directory, or anything else (file, socket, ...)
  int err = 0;          // 0 or an errno
  const char* step = "";  // where it failed: open, mkdir, stat, target, mount, verify
  int component = -1;   // index of the component that failed (open, mkdir), else -1
};

// Blocking: runs on a worker thread. Never throws.
SubPathResult BindSubPath(const SubPathRequest& req);

}  // namespace kts

#endif  // KUBELET_TS_SUBPATH_H_
