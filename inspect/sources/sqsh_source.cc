// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/sqsh_source.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/error.h"
#include "sqsh/sqsh.h"

namespace trainimg::inspect {

namespace {

constexpr size_t kMaxConfigFile = 1 << 20;  // /etc/rc and friends are a few hundred bytes
const char kLayer[] = "squashfs";

EntryType entry_type(sqsh::NodeType t) {
  switch (t) {
    case sqsh::NodeType::File: return EntryType::File;
    case sqsh::NodeType::Dir: return EntryType::Dir;
    case sqsh::NodeType::Symlink: return EntryType::Symlink;
    case sqsh::NodeType::Hardlink: return EntryType::Hardlink;
    case sqsh::NodeType::Fifo: return EntryType::Fifo;
    case sqsh::NodeType::CharDev: return EntryType::CharDev;
    case sqsh::NodeType::BlockDev: return EntryType::BlockDev;
    case sqsh::NodeType::Socket: return EntryType::Socket;
  }
  return EntryType::File;
}

// Fills e from n, reusing e's buffers (one Entry serves the whole walk).
void fill_entry(const sqsh::Node& n, Entry& e) {
  e.path = n.path;
  e.type = entry_type(n.type);
  e.mode = n.mode;
  e.uid = n.uid;
  e.gid = n.gid;
  e.size = n.size;
  e.mtime = n.mtime;
  e.rdev_major = n.rdev_major;
  e.rdev_minor = n.rdev_minor;
  e.link_target = n.link_target;
  if (n.xattrs.empty())
    e.xattrs.clear();
  else
    e.xattrs = n.xattrs;
  if (e.layer != kLayer) e.layer = kLayer;
}

class Content : public ContentReader {
 public:
  explicit Content(sqsh::FileReader& r) : r_(r) {}
  size_t read(char* buf, size_t n) override { return r_.read(buf, n); }
  uint64_t skip(uint64_t n) override { return r_.skip(n); }

 private:
  sqsh::FileReader& r_;
};

// Inode number -> the path the walk met first, for inodes with several
// names: the walk offers the later names as hard links to it, and so must
// the lister.
using FirstNames = std::unordered_map<uint32_t, std::string>;

bool is_whiteout_name(const std::string& path) {
  return std::string_view(path).substr(path.rfind('/') + 1).starts_with(".wh.");
}

// Bridges sqsh::Visitor to LayerVisitor, one Entry per node.
class Bridge : public sqsh::Visitor {
 public:
  Bridge(LayerVisitor& v, FirstNames& first) : v_(v), first_(first) {}
  bool entry(const sqsh::Node& n) override {
    if (n.nlink > 1 && n.type != sqsh::NodeType::Dir && n.type != sqsh::NodeType::Hardlink)
      first_.try_emplace(n.inode_number, n.path);
    fill_entry(n, current_);
    return v_.entry(current_);
  }
  void content(const sqsh::Node&, sqsh::FileReader& r) override {
    Content c(r);
    v_.content(current_, c);
  }

 private:
  LayerVisitor& v_;
  FirstNames& first_;
  Entry current_;
};

class SqshLister : public DirLister {
 public:
  explicit SqshLister(const std::string& path) : image(path) {}
  SqshLister(int fd, const std::string& name) : image(fd, name) {}
  std::vector<Entry> list(const std::string& dir) override {
    std::vector<Entry> out;
    for (const sqsh::Node& n : image.list(dir)) {
      if (is_whiteout_name(n.path)) continue;  // one layer: its whiteouts hide nothing
      Entry& e = out.emplace_back();
      fill_entry(n, e);
      if (n.nlink > 1 && n.type != sqsh::NodeType::Dir) {
        auto it = first.find(n.inode_number);
        if (it != first.end() && it->second != n.path) {
          e.type = EntryType::Hardlink;
          e.link_target = it->second;
          e.size = 0;
        }
      }
    }
    return out;
  }
  sqsh::Image image;
  FirstNames first;  ///< filled by the walk
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

class SqshSource : public ImageSource {
 public:
  explicit SqshSource(const std::string& path) : path_(path), lister_(std::make_shared<SqshLister>(path)) {}
  SqshSource(int fd, const std::string& name)
      : path_(name), lister_(std::make_shared<SqshLister>(fd, name)) {}

  ImageDescription describe() override {
    ImageDescription d;
    d.reference = path_;
    d.kind = "sqsh";
    d.layers = {kLayer};
    d.has_config = false;
    auto env = image_.read_file("/etc/environment", kMaxConfigFile);
    auto rc = image_.read_file("/etc/rc", kMaxConfigFile);
    auto fstab = image_.read_file("/etc/fstab", kMaxConfigFile);
    d.config = parse_enroot_config(env.value_or(""), rc.value_or(""), fstab.value_or(""));
    return d;
  }

  void walk(LayerVisitor& v) override {
    v.expect_entries(image_.info().inode_count);
    v.begin_layer(kLayer, 0);
    lister_->first.clear();
    Bridge b(v, lister_->first);
    image_.walk(b);
    v.end_layer(kLayer, 0);
  }

  std::shared_ptr<DirLister> lister() override { return lister_; }

 private:
  std::string path_;
  std::shared_ptr<SqshLister> lister_;
  sqsh::Image& image_ = lister_->image;
};

}  // namespace

std::vector<std::string> split_shell_words(const std::string& line) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  size_t i = 0;
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < line.size()) {
    char c = line[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::exchange(cur, {}));
      in_word = false;
      ++i;
    } else if (c == '$' && i + 1 < line.size() && line[i + 1] == '\'') {
      // bash ${var@Q} uses $'...' for words with control characters.
      in_word = true;
      i += 2;
      while (i < line.size() && line[i] != '\'') {
        if (line[i] == '\\' && i + 1 < line.size()) {
          char e = line[++i];
          switch (e) {
            case 'n': cur += '\n'; break;
            case 't': cur += '\t'; break;
            case 'r': cur += '\r'; break;
            case 'e':
            case 'E': cur += '\x1b'; break;
            case 'x': {
              std::string h;
              while (h.size() < 2 && i + 1 < line.size() && hex(line[i + 1])) h += line[++i];
              cur += static_cast<char>(h.empty() ? 0 : std::stoi(h, nullptr, 16));
              break;
            }
            default: cur += e;
          }
        } else {
          cur += line[i];
        }
        ++i;
      }
      ++i;
    } else if (c == '\'') {
      in_word = true;
      size_t end = line.find('\'', i + 1);
      if (end == std::string::npos) end = line.size();
      cur += line.substr(i + 1, end - i - 1);
      i = end + 1;
    } else if (c == '"') {
      in_word = true;
      ++i;
      while (i < line.size() && line[i] != '"') {
        if (line[i] == '\\' && i + 1 < line.size() &&
            std::string_view("\"\\$`").find(line[i + 1]) != std::string_view::npos)
          ++i;
        cur += line[i++];
      }
      ++i;
    } else if (c == '\\' && i + 1 < line.size()) {
      in_word = true;
      cur += line[i + 1];
      i += 2;
    } else {
      in_word = true;
      cur += c;
      ++i;
    }
  }
  if (in_word) words.push_back(cur);
  return words;
}

ImageConfig parse_enroot_config(const std::string& environment, const std::string& rc,
                                const std::string& fstab) {
  ImageConfig c;
  for (const auto& l : lines_of(environment)) {
    if (!l.empty()) c.env.push_back(l);
  }
  // /etc/rc as enroot's docker::configure writes it (domain.md §4).
  std::vector<std::string> exec_with_args, exec_without_args;
  bool in_else = false;
  for (const auto& raw : lines_of(rc)) {
    std::string l = raw;
    size_t b = l.find_first_not_of(" \t");
    l = b == std::string::npos ? "" : l.substr(b);
    if (l.rfind("# ", 0) == 0) {
      std::string kv = l.substr(2);
      if (kv.rfind("enroot-provenance:", 0) == 0) continue;
      size_t sp = kv.find(' ');
      if (sp != std::string::npos) c.labels[kv.substr(0, sp)] = kv.substr(sp + 1);
    } else if (l.rfind("cd ", 0) == 0) {
      auto words = split_shell_words(l);
      if (words.size() >= 2) c.workdir = words[1];
    } else if (l == "else") {
      in_else = true;
    } else if (l.rfind("exec ", 0) == 0 || l == "exec") {
      auto words = split_shell_words(l);
      words.erase(words.begin());
      (in_else ? exec_without_args : exec_with_args) = words;
    }
  }
  // `exec ENTRYPOINT... "$@"` and `exec ENTRYPOINT... CMD...`.
  if (!exec_with_args.empty() && exec_with_args.back() == "$@") exec_with_args.pop_back();
  c.entrypoint = exec_with_args;
  if (exec_without_args.size() >= c.entrypoint.size() &&
      std::equal(c.entrypoint.begin(), c.entrypoint.end(), exec_without_args.begin())) {
    c.cmd.assign(exec_without_args.begin() + static_cast<long>(c.entrypoint.size()), exec_without_args.end());
  }
  for (const auto& l : lines_of(fstab)) {
    auto words = split_shell_words(l);
    if (words.size() >= 2 && words[0].rfind("#", 0) != 0) c.volumes.push_back(words[1]);
  }
  return c;
}

std::unique_ptr<ImageSource> open_sqsh_source(const std::string& path) {
  return std::make_unique<SqshSource>(path);
}

std::unique_ptr<ImageSource> open_sqsh_source(int fd, const std::string& name) {
  return std::make_unique<SqshSource>(fd, name);
}

}  // namespace trainimg::inspect
