// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/shared_dir.h"

#include <dirent.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/error.h"

namespace trainimg {
namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 10 && s.find_first_not_of("0123456789") == std::string::npos;
}

std::string user_name(uid_t uid) {
  struct passwd pw {
  }, *res = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &res) == 0 && res) return pw.pw_name;
  return {};
}

}  // namespace

Trust Trust::parse(const std::string& spec, const std::string& var, uid_t dir_owner) {
  Trust t;
  t.self_ = ::geteuid();
  if (spec.empty()) {
    t.uids_.push_back(dir_owner);
    return t;
  }
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? spec.size() + 1 : comma + 1;
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.erase(0, 1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.pop_back();
    if (item.empty()) continue;
    auto colon = item.find(':');
    std::string kind = colon == std::string::npos ? "" : item.substr(0, colon);
    std::string name = colon == std::string::npos ? "" : item.substr(colon + 1);
    const std::string hint = "expected user:NAME, group:NAME, uid:N or gid:N, separated by commas";
    if (name.empty()) throw Error(var, "'" + item + "' is not KIND:NAME", hint);
    if (kind == "uid" && all_digits(name)) {
      t.uids_.push_back(static_cast<uid_t>(std::stoul(name)));
    } else if (kind == "gid" && all_digits(name)) {
      t.gids_.push_back(static_cast<gid_t>(std::stoul(name)));
    } else if (kind == "user") {
      struct passwd pw {
      }, *res = nullptr;
      std::vector<char> buf(16384);
      if (getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &res) != 0 || !res)
        throw Error(var, "no user '" + name + "' on this node", hint);
      t.uids_.push_back(pw.pw_uid);
    } else if (kind == "group") {
      struct group gr {
      }, *res = nullptr;
      std::vector<char> buf(65536);
      if (getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &res) != 0 || !res)
        throw Error(var, "no group '" + name + "' on this node", hint);
      t.gids_.push_back(gr.gr_gid);
    } else {
      throw Error(var, "'" + item + "' is not KIND:NAME", hint);
    }
  }
  return t;
}

bool Trust::listed(uid_t uid) const {
  if (uid == 0 || std::find(uids_.begin(), uids_.end(), uid) != uids_.end()) return true;
  if (gids_.empty()) return false;
  if (auto it = members_.find(uid); it != members_.end()) return it->second;
  bool member = false;
  struct passwd pw {
  }, *res = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &res) == 0 && res) {
    int n = 64;
    std::vector<gid_t> groups(static_cast<size_t>(n));
    if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) {
      groups.resize(static_cast<size_t>(n));
      if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) n = 0;
    }
    groups.resize(static_cast<size_t>(std::max(n, 0)));
    for (gid_t g : groups)
      if (std::find(gids_.begin(), gids_.end(), g) != gids_.end()) member = true;
  }
  members_[uid] = member;
  return member;
}

bool Trust::trusts(uid_t owner) const {
  return owner == self_ || listed(owner);
}

bool Trust::caller_writes_shared() const {
  return listed(self_);
}

bool Trust::trusts_file(const struct stat& st) const {
  return (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) && (st.st_mode & 022) == 0 && trusts(st.st_uid);
}

std::string Trust::describe() const {
  std::string s = "root";
  for (uid_t u : uids_) {
    if (u == 0) continue;
    std::string n = user_name(u);
    s += ", uid " + std::to_string(u) + (n.empty() ? "" : " (" + n + ")");
  }
  for (gid_t g : gids_) s += ", gid " + std::to_string(g);
  return s + " and the caller";
}

void check_shared_dir(const std::string& dir, const std::string& var) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) throw_errno(dir, "cannot use " + var);
  if (!S_ISDIR(st.st_mode)) throw Error(dir, var + " is not a directory");
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
    throw Error(dir,
                var + " is writable by every user without the sticky bit: anyone could replace what is in it",
                "chmod 1777 " + dir + " (like /tmp), or give it to a group of trusted users (mode 1770)");
}

std::string own_area(const std::string& dir) {
  const uid_t me = ::geteuid();
  const std::string area = dir + "/user-" + std::to_string(me);
  if (::mkdir(area.c_str(), 0700) != 0 && errno != EEXIST) throw_errno(area, "cannot create your own area");
  struct stat st {};
  if (::lstat(area.c_str(), &st) != 0) throw_errno(area, "cannot read your own area");
  if (!S_ISDIR(st.st_mode))
    throw Error(area, "your own area in the shared directory is not a directory (someone else made it)",
                "ask an administrator to remove it");
  if (st.st_uid != me)
    throw Error(area,
                "your own area in the shared directory belongs to uid " + std::to_string(st.st_uid) +
                    ", not to you (uid " + std::to_string(me) + ")",
                "ask an administrator to remove it; nothing in it is used");
  if ((st.st_mode & 077) != 0 && ::chmod(area.c_str(), 0700) != 0) throw_errno(area, "chmod 0700");
  return area;
}

std::vector<std::string> user_areas(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.starts_with("user-") && all_digits(n.substr(5))) out.push_back(dir + "/" + n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trainimg
