// SPDX-License-Identifier: GPL-3.0-or-later
// Directories many users share (TRAINIMG_PYXIS_CACHE, a TRAINIMG_CACHE made
// with mode 1777 like /tmp): whose files a job may use, and where a user
// who is not trusted by the others keeps their own. A file there is used
// only when its owner is the calling user, root, or an account the site
// names (TRAINIMG_PYXIS_CACHE_TRUST / TRAINIMG_CACHE_TRUST=
// user:NAME,group:NAME,uid:N,gid:N; default: the directory's owner), and
// nobody else can write it: never by its name, size or sidecar alone.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace trainimg {

class Trust {
 public:
  /// `spec` empty: root and `dir_owner`. Throws Error naming `var` for an
  /// unknown user or group, or an item that is not KIND:NAME.
  static Trust parse(const std::string& spec, const std::string& var, uid_t dir_owner);
  /// Root, the caller, a listed uid, or a member of a listed group.
  bool trusts(uid_t owner) const;
  /// Whether the caller's files are trusted by every other user (root, a
  /// listed account): then it writes the shared area, else its own area.
  bool caller_writes_shared() const;
  /// A regular file (or directory) owned by a trusted account that no
  /// other account can write (no group or other write bit).
  bool trusts_file(const struct stat& st) const;
  /// "root, uid 1000 (alice), group ci" for messages.
  std::string describe() const;

 private:
  bool listed(uid_t uid) const;
  std::vector<uid_t> uids_;
  std::vector<gid_t> gids_;
  uid_t self_ = 0;
  mutable std::map<uid_t, bool> members_;  // group membership looked up once per uid
};

/// Refuses a directory that others can write without the sticky bit (any
/// user could rename or replace what is in it). `var` names the setting.
void check_shared_dir(const std::string& dir, const std::string& var);

/// The caller's own area inside a shared directory, DIR/user-UID (mode
/// 0700, created when missing). Throws Error when the name is taken by
/// anything but the caller's own directory that only it can write.
std::string own_area(const std::string& dir);

/// The per-user areas under `dir` (DIR/user-N directories), sorted.
std::vector<std::string> user_areas(const std::string& dir);

}  // namespace trainimg
