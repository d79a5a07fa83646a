// SPDX-License-Identifier: GPL-3.0-or-later
// The build context as a tar stream, produced on demand as the daemon reads
// it: a directory walk (sorted, symlinks not followed) filtered by
// .dockerignore, written with libarchive into a small buffer that read()
// drains. Nothing is copied to disk; memory holds one file chunk at a time.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "builder/dockerignore.h"
#include "common/fd.h"

namespace trainimg::builder {

struct ContextFile {
  std::string name;  ///< context-relative path
  std::string content;
};

class ContextStream {
 public:
  /// `dir`: the context directory. `ignore`: patterns already adjusted (the
  /// Dockerfile kept). `injected`: files added at the end, replacing any file
  /// of the same name in `dir` (a rendered Dockerfile, an amended
  /// .dockerignore). Throws Error when `dir` is not a readable directory.
  ContextStream(std::string dir, DockerIgnore ignore, std::vector<ContextFile> injected);
  ~ContextStream();
  ContextStream(const ContextStream&) = delete;
  ContextStream& operator=(const ContextStream&) = delete;

  /// Fills up to `n` bytes of tar; 0 at the end. Throws Error naming the file
  /// that could not be read.
  size_t read(char* buf, size_t n);

  uint64_t files() const { return files_; }  ///< entries written so far
  uint64_t bytes() const { return bytes_; }  ///< tar bytes produced so far

 private:
  struct Frame {
    std::string rel;  ///< "" for the context root
    std::vector<std::string> names;
    size_t next = 0;
  };
  struct ArchiveDeleter {
    void operator()(archive* a) const { archive_write_free(a); }
  };
  static la_ssize_t on_write(archive* a, void* self, const void* buf, size_t n);
  void step();
  void push_dir(const std::string& rel);
  void add_entry(const std::string& rel, const struct stat& st);
  void add_injected(const ContextFile& f);
  void check(int rc, const std::string& what);
  std::string full(const std::string& rel) const;
  bool is_injected(const std::string& rel) const;

  std::string dir_;
  DockerIgnore ignore_;
  std::vector<ContextFile> injected_;
  size_t next_injected_ = 0;
  std::unique_ptr<archive, ArchiveDeleter> ar_;
  archive_entry_linkresolver* links_ = nullptr;
  std::vector<Frame> stack_;
  UniqueFd file_;  ///< regular file being copied
  std::string file_rel_;
  std::string out_;
  size_t out_pos_ = 0;
  bool closed_ = false;
  uint64_t files_ = 0, bytes_ = 0;
};

/// A stable, content-derived name for a Dockerfile injected into the
/// context: ".trainimg-dockerfile-<16 hex>".
std::string injected_dockerfile_name(const std::string& content);

}  // namespace trainimg::builder
