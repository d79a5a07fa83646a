// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/docker_archive_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>

#include "common/error.h"
#include "common/fd.h"
#include "inspect/sources/image_config.h"
#include "inspect/sources/string_source.h"

namespace trainimg::inspect {
namespace {

constexpr uint64_t kSmallMember = 4 << 20;   // kept in memory until the end
constexpr uint64_t kSmallTotal = 64 << 20;   // at most this much in all
constexpr uint64_t kMaxTrailing = 1 << 20;   // after a layer tar's end marker
constexpr int kMaxLinkHops = 16;

// The current member of the outer archive, as a byte source.
class MemberSource : public ContentReader {
 public:
  explicit MemberSource(TarReader& outer) : outer_(outer) {}
  size_t read(char* buf, size_t n) override { return outer_.read(buf, n); }
  std::string_view read_view(std::span<char> scratch) override { return outer_.read_view(scratch); }

 private:
  TarReader& outer_;
};

// One unlinked temporary file holding the bytes of the wanted files only.
class SpillFile {
 public:
  explicit SpillFile(const std::string& input) : input_(input) {}
  uint64_t append(ContentReader& r) {
    open_once();
    uint64_t start = end_;
    char buf[65536];
    while (size_t n = r.read(buf, sizeof buf)) {
      for (size_t done = 0; done < n;) {
        ssize_t w = pwrite(fd_.get(), buf + done, n - done, static_cast<off_t>(end_));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw_errno(input_, "write to the temporary file of wanted files");
        done += static_cast<size_t>(w);
        end_ += static_cast<uint64_t>(w);
      }
    }
    return end_ - start;
  }
  uint64_t end() const { return end_; }
  int fd() const { return fd_.get(); }

 private:
  void open_once() {
    if (fd_) return;
    const char* t = std::getenv("TMPDIR");
    std::string dir = t && *t ? t : "/tmp";
    fd_.reset(open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    if (!fd_) throw_errno(dir, "cannot create a temporary file for wanted files");
  }
  std::string input_;
  UniqueFd fd_;
  uint64_t end_ = 0;
};

class SpillReader : public ContentReader {
 public:
  SpillReader(int fd, uint64_t off, uint64_t size, std::string name) : r_(fd, off, size, std::move(name)) {}
  size_t read(char* buf, size_t n) override { return r_.read(buf, n); }
  uint64_t skip(uint64_t n) override { return r_.skip(n); }

 private:
  FileRange r_;
};

struct RecordedEntry {
  Entry entry;
  bool spilled = false;
  uint64_t offset = 0, size = 0;
};

// Records a layer met before its place is known.
class Recorder : public LayerVisitor {
 public:
  Recorder(LayerVisitor* target, SpillFile& spill) : target_(target), spill_(spill) {}
  bool entry(const Entry& e) override {
    entries_.push_back(RecordedEntry{e});
    return e.type == EntryType::File && target_ && target_->may_want(e);
  }
  void content(const Entry&, ContentReader& r) override {
    RecordedEntry& re = entries_.back();
    re.offset = spill_.end();
    re.size = spill_.append(r);
    re.spilled = true;
  }
  std::vector<RecordedEntry> take() { return std::move(entries_); }

 private:
  LayerVisitor* target_;
  SpillFile& spill_;
  std::vector<RecordedEntry> entries_;
};

struct Link {
  bool hard = false;
  std::string target;
};

class StreamReader {
 public:
  StreamReader(ContentReader& in, std::string file, std::string ref, LayerVisitor* v)
      : in_(in), file_(std::move(file)), ref_(std::move(ref)), v_(v), spill_(file_) {}

  ImageDescription run() {
    read_members();
    auto manifest = parse_json(small("manifest.json"), file_, "manifest.json");
    ArchiveImage image = select_archive_image(manifest, ref_, file_);
    ImageDescription d;
    const std::string config = small(image.config);
    d.config_digest = sha256_digest(config);
    auto parsed = parse_image_config(parse_json(config, file_, image.config), file_, image.config);
    d.has_config = true;
    d.config = parsed.config;
    if (!parsed.diff_ids.empty() && parsed.diff_ids.size() != image.layers.size())
      throw Error(file_, "'" + image.config + "' lists " + std::to_string(parsed.diff_ids.size()) +
                             " diff_ids but manifest.json names " + std::to_string(image.layers.size()) + " layers");
    for (size_t i = 0; i < image.layers.size(); ++i) {
      std::string id = i < parsed.diff_ids.size() ? parsed.diff_ids[i] : digest_from_member_name(image.layers[i]);
      d.layers.push_back(id.empty() ? image.layers[i] : id);
    }
    if (v_)
      for (size_t i = 0; i < image.layers.size(); ++i) replay(image.layers[i], d.layers[i], i);
    return d;
  }

 private:
  void read_members() {
    TarReader outer(in_, file_, "", 1 << 20);
    while (archive_entry* ae = outer.next()) {
      const char* raw = archive_entry_pathname(ae);
      std::string why;
      auto p = safe_member_path(raw ? raw : "", why);
      if (!p) outer.fail("member '" + std::string(raw ? raw : "") + "'", why);
      std::string name = p->substr(1);
      if (const char* h = archive_entry_hardlink(ae)) {
        links_[name] = Link{true, h};
        continue;
      }
      if (archive_entry_filetype(ae) == AE_IFLNK) {
        links_[name] = Link{false, archive_entry_symlink(ae) ? archive_entry_symlink(ae) : ""};
        continue;
      }
      if (archive_entry_filetype(ae) != AE_IFREG) continue;
      auto size = static_cast<uint64_t>(std::max<la_int64_t>(archive_entry_size(ae), 0));
      MemberSource member(outer);
      HashingSource hashed(member, /*allow_seek=*/false);
      if (size <= kSmallMember && small_total_ + size <= kSmallTotal) {
        std::string bytes;
        char buf[65536];
        while (size_t n = hashed.read(buf, sizeof buf)) bytes.append(buf, n);
        small_total_ += bytes.size();
        check_digest(name, *hashed.finish(file_, name, 0));
        small_[name] = std::move(bytes);
        continue;
      }
      Recorder rec(v_, spill_);
      walk_layer_tar(hashed, LayerInput{file_, name, "", 0}, rec);
      check_digest(name, *hashed.finish(file_, "layer " + name, kMaxTrailing));
      recorded_[name] = rec.take();
    }
  }

  void check_digest(const std::string& name, const std::string& got) {
    std::string want = digest_from_member_name(name);
    if (!want.empty() && want != got)
      throw Error(file_, "member '" + name + "': digest mismatch: the name says " + want + ", the content is " + got);
  }

  std::string resolve(const std::string& name) const {
    std::string cur = name;
    for (int hop = 0; hop <= kMaxLinkHops; ++hop) {
      auto it = links_.find(cur);
      if (it == links_.end()) return cur;
      auto slash = cur.rfind('/');
      std::string next = it->second.hard ? it->second.target
                                         : (slash == std::string::npos ? "" : cur.substr(0, slash)) + "/" +
                                               it->second.target;
      std::string why;
      auto p = safe_member_path(next, why);
      if (!p) throw Error(file_, "member '" + cur + "' links out of the archive: " + why);
      cur = p->substr(1);
    }
    throw Error(file_, "member '" + name + "': too many links");
  }

  const std::string& small(const std::string& name) const {
    auto it = small_.find(resolve(name));
    if (it == small_.end()) {
      if (recorded_.count(resolve(name)))
        throw Error(file_, "member '" + name + "' is too large for a JSON document");
      if (name == "manifest.json") throw Error(file_, "no manifest.json: not a docker archive (docker save output)");
      throw Error(file_, "member '" + name + "' is missing from the archive");
    }
    return it->second;
  }

  void replay(const std::string& member, const std::string& layer_id, size_t index) {
    const std::string name = resolve(member);
    if (auto s = small_.find(name); s != small_.end()) {
      StringSource bytes(s->second);
      walk_layer_tar(bytes, LayerInput{file_, member, layer_id, index}, *v_);
      return;
    }
    auto r = recorded_.find(name);
    if (r == recorded_.end()) throw Error(file_, "layer '" + member + "' named by manifest.json is missing");
    v_->begin_layer(layer_id, index);
    for (const auto& re : r->second) {
      Entry e = re.entry;
      e.layer = layer_id;
      if (!v_->entry(e) || e.type != EntryType::File) continue;
      if (!re.spilled)
        throw Error(file_, "layer '" + member + "': '" + e.path +
                               "' was wanted although may_want() said no (a LayerVisitor bug)");
      SpillReader sr(spill_.fd(), re.offset, re.size, file_);
      v_->content(e, sr);
    }
    v_->end_layer(layer_id, index);
  }

  ContentReader& in_;
  std::string file_, ref_;
  LayerVisitor* v_;
  SpillFile spill_;
  uint64_t small_total_ = 0;
  std::map<std::string, std::string> small_;
  std::map<std::string, std::vector<RecordedEntry>> recorded_;
  std::map<std::string, Link> links_;
};

}  // namespace

ImageDescription read_docker_archive_stream(ContentReader& in, const std::string& file,
                                            const std::string& ref, LayerVisitor* v) {
  return StreamReader(in, file, ref, v).run();
}

}  // namespace trainimg::inspect
