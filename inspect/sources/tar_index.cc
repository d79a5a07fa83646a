// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>

#include "common/error.h"
#include "inspect/sources/tar_layer.h"

namespace trainimg::inspect {
namespace {

// Members linking to members: docker's old layout links duplicate layers.
constexpr int kMaxLinkHops = 16;

std::string parent_member(const std::string& m) {
  auto slash = m.rfind('/');
  return slash == std::string::npos ? "" : m.substr(0, slash);
}

}  // namespace

bool TarIndex::index(int fd, uint64_t size, const std::string& file) {
  fd_ = fd;
  file_ = file;
  members_.clear();
  FileRange whole(fd, 0, size, file);
  TarReader t(whole, file, "", 16 * 1024);
  while (archive_entry* ae = t.next()) {
    if (t.compressed()) return false;
    const char* raw = archive_entry_pathname(ae);
    std::string why;
    auto p = safe_member_path(raw ? raw : "", why);
    if (!p) t.fail("member '" + std::string(raw ? raw : "") + "'", why);
    Member m;
    m.offset = static_cast<uint64_t>(t.data_offset());
    m.size = static_cast<uint64_t>(std::max<la_int64_t>(archive_entry_size(ae), 0));
    if (const char* h = archive_entry_hardlink(ae)) {
      m.type = EntryType::Hardlink;
      auto hp = safe_member_path(h, why);
      if (!hp) t.fail("member '" + std::string(raw) + "'", "hard link target: " + why);
      m.link = hp->substr(1);
    } else if (archive_entry_filetype(ae) == AE_IFLNK) {
      m.type = EntryType::Symlink;
      m.link = archive_entry_symlink(ae) ? archive_entry_symlink(ae) : "";
    } else if (archive_entry_filetype(ae) == AE_IFDIR) {
      m.type = EntryType::Dir;
    } else if (archive_entry_filetype(ae) != AE_IFREG) {
      continue;
    }
    if (m.type == EntryType::File && m.offset + m.size > size)
      t.fail("member '" + std::string(raw) + "'", "claims " + std::to_string(m.size) + " bytes at offset " +
                                                      std::to_string(m.offset) + " but the file has " +
                                                      std::to_string(size));
    members_[p->substr(1)] = m;
  }
  return true;
}

const TarIndex::Member* TarIndex::resolve(const std::string& name) const {
  std::string cur = name;
  for (int hop = 0; hop <= kMaxLinkHops; ++hop) {
    auto it = members_.find(cur);
    if (it == members_.end()) {
      if (cur == name) return nullptr;
      throw Error(file_, "member '" + name + "' links to '" + cur + "', which is missing");
    }
    const Member& m = it->second;
    if (m.type == EntryType::File) return &m;
    if (m.type == EntryType::Dir) throw Error(file_, "member '" + name + "' is a directory");
    std::string next = m.type == EntryType::Hardlink ? m.link : parent_member(cur) + "/" + m.link;
    std::string why;
    auto p = safe_member_path(next, why);
    if (!p) throw Error(file_, "member '" + cur + "' links out of the archive: " + why);
    cur = p->substr(1);
  }
  throw Error(file_, "member '" + name + "': too many links");
}

std::string TarIndex::read(const Member& m, const std::string& name, uint64_t max) const {
  if (m.size > max)
    throw Error(file_, "member '" + name + "' is " + std::to_string(m.size) + " bytes, too large for JSON");
  std::string out(m.size, '\0');
  FileRange r(fd_, m.offset, m.size, file_);
  size_t done = 0;
  while (done < out.size()) {
    size_t got = r.read(out.data() + done, out.size() - done);
    if (got == 0) throw Error(file_, "member '" + name + "' is truncated");
    done += got;
  }
  return out;
}

}  // namespace trainimg::inspect
