// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/context.h"

#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace trainimg::builder {
namespace {

constexpr size_t kChunk = 256 << 10;

struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using Entry = std::unique_ptr<archive_entry, EntryDeleter>;

}  // namespace

std::string injected_dockerfile_name(const std::string& content) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : content) h = (h ^ c) * 1099511628211ull;
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (int i = 60; i >= 0; i -= 4) hex += kHex[(h >> i) & 15];
  return ".trainimg-dockerfile-" + hex;
}

ContextStream::ContextStream(std::string dir, DockerIgnore ignore, std::vector<ContextFile> injected)
    : dir_(std::move(dir)), ignore_(std::move(ignore)), injected_(std::move(injected)) {
  struct stat st;
  if (::stat(dir_.c_str(), &st) != 0) throw_errno(dir_, "cannot open the build context");
  if (!S_ISDIR(st.st_mode)) throw Error(dir_, "the build context is not a directory");
  ar_.reset(archive_write_new());
  if (!ar_) throw Error(dir_, "libarchive: out of memory");
  check(archive_write_set_format_pax_restricted(ar_.get()), "set tar format");
  // Unblocked: every header and data chunk reaches on_write at once, and the
  // end of the archive is not padded to 10 KiB.
  check(archive_write_set_bytes_per_block(ar_.get(), 0), "set block size");
  check(archive_write_open(ar_.get(), this, nullptr, &ContextStream::on_write, nullptr), "open tar writer");
  links_ = archive_entry_linkresolver_new();
  archive_entry_linkresolver_set_strategy(links_, archive_format(ar_.get()));
  push_dir("");
}

ContextStream::~ContextStream() {
  if (links_) archive_entry_linkresolver_free(links_);
}

void ContextStream::check(int rc, const std::string& what) {
  if (rc < ARCHIVE_WARN) {
    const char* msg = archive_error_string(ar_.get());
    throw Error(dir_, "build context tar: " + what + ": " + (msg ? msg : "libarchive error"));
  }
}

la_ssize_t ContextStream::on_write(archive*, void* self, const void* buf, size_t n) {
  auto* s = static_cast<ContextStream*>(self);
  s->out_.append(static_cast<const char*>(buf), n);  // bounded: one chunk or header
  s->bytes_ += n;
  return la_ssize_t(n);
}

std::string ContextStream::full(const std::string& rel) const { return rel.empty() ? dir_ : dir_ + "/" + rel; }

bool ContextStream::is_injected(const std::string& rel) const {
  return std::any_of(injected_.begin(), injected_.end(), [&](const ContextFile& f) { return f.name == rel; });
}

void ContextStream::push_dir(const std::string& rel) {
  std::string path = full(rel);
  DIR* d = ::opendir(path.c_str());
  if (!d) throw_errno(path, "cannot read the build context directory");
  Frame f;
  f.rel = rel;
  errno = 0;
  while (dirent* de = ::readdir(d)) {
    std::string name = de->d_name;
    if (name != "." && name != "..") f.names.push_back(std::move(name));
  }
  int e = errno;
  ::closedir(d);
  if (e != 0) {
    errno = e;
    throw_errno(path, "cannot read the build context directory");
  }
  std::sort(f.names.begin(), f.names.end());  // reproducible order
  stack_.push_back(std::move(f));
}

void ContextStream::add_entry(const std::string& rel, const struct stat& st) {
  Entry e(archive_entry_new());
  archive_entry_copy_pathname(e.get(), rel.c_str());
  archive_entry_copy_stat(e.get(), &st);
  // Owned by root, as the docker CLI sends it; no user or group names.
  archive_entry_set_uid(e.get(), 0);
  archive_entry_set_gid(e.get(), 0);
  archive_entry_unset_atime(e.get());
  archive_entry_unset_ctime(e.get());
  if (S_ISLNK(st.st_mode)) {
    std::string target(size_t(st.st_size) + 1, '\0');
    ssize_t n = ::readlink(full(rel).c_str(), target.data(), target.size());
    if (n < 0) throw_errno(full(rel), "cannot read the symbolic link");
    target.resize(size_t(n));
    archive_entry_copy_symlink(e.get(), target.c_str());
  }
  if (!S_ISREG(st.st_mode)) archive_entry_set_size(e.get(), 0);
  UniqueFd fd;
  if (S_ISREG(st.st_mode)) {
    fd.reset(::open(full(rel).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) throw_errno(full(rel), "cannot read a build context file");
  }
  archive_entry* raw = e.release();
  archive_entry* spare = nullptr;
  archive_entry_linkify(links_, &raw, &spare);  // a second hard link becomes a link entry
  e.reset(raw);
  Entry spare_owner(spare);
  check(archive_write_header(ar_.get(), e.get()), "write header of " + rel);
  ++files_;
  if (S_ISREG(st.st_mode) && archive_entry_size(e.get()) > 0) {
    file_ = std::move(fd);
    file_rel_ = rel;
  }
}

void ContextStream::add_injected(const ContextFile& f) {
  Entry e(archive_entry_new());
  archive_entry_copy_pathname(e.get(), f.name.c_str());
  archive_entry_set_filetype(e.get(), AE_IFREG);
  archive_entry_set_perm(e.get(), 0644);
  archive_entry_set_size(e.get(), la_int64_t(f.content.size()));
  check(archive_write_header(ar_.get(), e.get()), "write header of " + f.name);
  if (!f.content.empty() && archive_write_data(ar_.get(), f.content.data(), f.content.size()) < 0)
    check(ARCHIVE_FATAL, "write " + f.name);
  ++files_;
}

void ContextStream::step() {
  if (file_) {
    char buf[kChunk];
    ssize_t n = ::read(file_.get(), buf, sizeof buf);
    if (n < 0) throw_errno(full(file_rel_), "cannot read a build context file");
    // A file that shrank while being sent is zero-padded by libarchive at the
    // next header; one that grew is cut at the size in its header.
    if (n == 0) {
      file_.reset();
      return;
    }
    if (archive_write_data(ar_.get(), buf, size_t(n)) < 0) check(ARCHIVE_FATAL, "write " + file_rel_);
    return;
  }
  while (!stack_.empty() && stack_.back().next == stack_.back().names.size()) stack_.pop_back();
  if (!stack_.empty()) {
    Frame& top = stack_.back();
    std::string rel = top.rel.empty() ? top.names[top.next] : top.rel + "/" + top.names[top.next];
    ++top.next;
    if (is_injected(rel)) return;  // replaced by the injected copy at the end
    struct stat st;
    if (::lstat(full(rel).c_str(), &st) != 0) throw_errno(full(rel), "cannot stat a build context file");
    if (S_ISSOCK(st.st_mode)) return;  // tar cannot hold a socket; the CLI skips them too
    if (ignore_.excluded(rel)) {
      if (S_ISDIR(st.st_mode) && ignore_.must_descend(rel)) push_dir(rel);
      return;
    }
    add_entry(rel, st);
    if (S_ISDIR(st.st_mode)) push_dir(rel);
    return;
  }
  if (next_injected_ < injected_.size()) {
    add_injected(injected_[next_injected_++]);
    return;
  }
  check(archive_write_close(ar_.get()), "finish");
  closed_ = true;
}

size_t ContextStream::read(char* buf, size_t n) {
  while (out_pos_ == out_.size() && !closed_) {
    out_.clear();
    out_pos_ = 0;
    step();
  }
  size_t take = std::min(n, out_.size() - out_pos_);
  std::memcpy(buf, out_.data() + out_pos_, take);
  out_pos_ += take;
  return take;
}

}  // namespace trainimg::builder
