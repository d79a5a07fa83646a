// SPDX-License-Identifier: GPL-3.0-or-later
// Test-only helpers for sqsh/*_test.cc: temporary directories, running the
// real squashfs tools, a fixture tree on disk, and reading a tree (from disk
// or from an Image) into comparable records. Header-only so that it stays
// out of the library.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sqsh/sqsh.h"

namespace trainimg::sqsh::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sqsh-test-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

struct RunResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

/// The directory of a file system with reflinks for tests that need one:
/// TRAINIMG_REFLINK_DIR, else what .ci/start-reflink.sh wrote to
/// /tmp/trainimg-ci-reflink; empty when there is none (the test skips).
inline std::string reflink_dir() {
  if (const char* d = std::getenv("TRAINIMG_REFLINK_DIR"); d && *d) return d;
  std::string dir;
  std::ifstream state("/tmp/trainimg-ci-reflink");
  std::getline(state, dir);
  return dir;
}

inline RunResult run(const std::string& cmd) {
  RunResult r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 65536> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

inline void write_file(const std::string& path, const std::string& data, mode_t mode = 0644) {
  std::ofstream(path, std::ios::binary) << data;
  ::chmod(path.c_str(), mode);
}

inline std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Deterministic bytes: compressible (text-like) or not (xorshift).
inline std::string make_bytes(size_t n, bool compressible, uint32_t seed = 1) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s[i] = compressible ? "export LD_LIBRARY_PATH=/opt/amazon/efa/lib\n"[i % 43] : static_cast<char>(x);
  }
  return s;
}

/// The fixture tree every reader/writer test uses: regular files of 0 bytes,
/// a few bytes, several blocks (compressible and not), a setuid binary,
/// symlinks (relative, absolute, dangling), a hard link pair, a FIFO, an
/// empty directory, a unicode name and a deep path. Returns true when user
/// xattrs could be set on the file system holding `root`.
inline bool make_fixture_tree(const std::string& root) {
  namespace fs = std::filesystem;
  fs::create_directories(root + "/etc");
  fs::create_directories(root + "/usr/lib/x86_64-linux-gnu");
  fs::create_directories(root + "/opt/amazon/efa/lib");
  fs::create_directories(root + "/empty");
  fs::create_directories(root + "/a/b/c/d/e/f/g");
  write_file(root + "/etc/environment",
             "PATH=/usr/local/bin:/usr/bin\nLD_LIBRARY_PATH=/opt/amazon/efa/lib\n");
  write_file(root + "/etc/empty-file", "");
  write_file(root + "/opt/amazon/efa/lib/libfabric.so.1.21.0", make_bytes(300000, false, 7), 0755);
  write_file(root + "/usr/lib/x86_64-linux-gnu/big.txt", make_bytes(3 << 20, true), 0644);
  write_file(root + "/usr/lib/x86_64-linux-gnu/sparse.bin", std::string(2 << 20, '\0'), 0644);
  write_file(root + "/a/b/c/d/e/f/g/deep", "deep\n", 0600);
  write_file(root + "/setuid-bin", make_bytes(5000, true, 3), 04755);
  write_file(root +
                 "/\xc3\xbc"
                 "n\xc3\xaf"
                 "c\xc3\xb8"
                 "d\xc3\xa9-\xe5\x90\x8d\xe5\x89\x8d"
                 ".txt",
             "unicode\n");
  fs::create_symlink("libfabric.so.1.21.0", root + "/opt/amazon/efa/lib/libfabric.so.1");
  fs::create_symlink("/opt/amazon/efa/lib/libfabric.so.1", root + "/usr/lib/libfabric-abs");
  fs::create_symlink("../does/not/exist", root + "/dangling");
  ::link((root + "/setuid-bin").c_str(), (root + "/usr/lib/setuid-hardlink").c_str());
  ::mkfifo((root + "/etc/initctl").c_str(), 0600);
  ::chmod((root + "/empty").c_str(), 0700);
  bool xattrs = ::setxattr((root + "/etc/environment").c_str(), "user.trainimg", "yes", 3, 0) == 0;
  return xattrs;
}

/// A comparable record: the Node plus the file content.
struct Record {
  Node node;
  std::string content;
};

inline std::map<std::string, Record> read_image(Image& img) {
  class Collect : public Visitor {
   public:
    bool entry(const Node& n) override {
      out[n.path].node = n;
      return true;
    }
    void content(const Node& n, FileReader& r) override {
      std::string& c = out[n.path].content;
      char buf[70000];  // odd size: reads cross block boundaries
      size_t k;
      while ((k = r.read(buf, sizeof buf)) > 0) c.append(buf, k);
    }
    std::map<std::string, Record> out;
  } c;
  img.walk(c);
  return std::move(c.out);
}

/// The tree on disk, as the reader should report it (hard links: the later
/// path in byte order is the Hardlink).
inline std::map<std::string, Record> read_disk(const std::string& root) {
  std::map<std::string, Record> out;
  std::map<std::pair<dev_t, ino_t>, std::string> seen;
  std::function<void(const std::string&, const std::string&)> rec = [&](const std::string& dir,
                                                                        const std::string& ipath) {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir.c_str());
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
      std::string full = dir + "/" + n;
      std::string ip = ipath == "/" ? "/" + n : ipath + "/" + n;
      struct stat st;
      ::lstat(full.c_str(), &st);
      Record& r = out[ip];
      r.node.path = ip;
      r.node.mode = st.st_mode & 07777;
      r.node.uid = st.st_uid;
      r.node.gid = st.st_gid;
      r.node.mtime = static_cast<uint32_t>(st.st_mtime);
      if (S_ISDIR(st.st_mode)) {
        r.node.type = NodeType::Dir;
        rec(full, ip);
      } else if (S_ISLNK(st.st_mode)) {
        r.node.type = NodeType::Symlink;
        r.node.link_target = std::filesystem::read_symlink(full).string();
      } else if (S_ISFIFO(st.st_mode)) {
        r.node.type = NodeType::Fifo;
      } else if (S_ISREG(st.st_mode)) {
        auto [it, fresh] = seen.try_emplace({st.st_dev, st.st_ino}, ip);
        if (!fresh) {
          r.node.type = NodeType::Hardlink;
          r.node.link_target = it->second;
        } else {
          r.node.type = NodeType::File;
          r.node.size = static_cast<uint64_t>(st.st_size);
          r.content = read_whole(full);
        }
      }
    }
  };
  struct stat st;
  ::lstat(root.c_str(), &st);
  out["/"].node.path = "/";
  out["/"].node.type = NodeType::Dir;
  out["/"].node.mode = st.st_mode & 07777;
  rec(root, "/");
  return out;
}

}  // namespace trainimg::sqsh::testing
