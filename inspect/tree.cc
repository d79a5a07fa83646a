// SPDX-License-Identifier: GPL-3.0-or-later
// build_tree(): applies layers the way overlayfs-based container runtimes
// see them (OCI image spec, "Applying Changesets" and "Whiteouts"):
//  - `.wh.NAME` removes NAME and its subtree as found in LOWER layers;
//  - `.wh..wh..opq` in DIR hides every lower-layer child of DIR;
//    entries of the same layer are never hidden by that layer's whiteouts,
//    whatever their order inside the tar;
//  - a later entry replaces an earlier one; a non-directory replacing a
//    directory (or the reverse) drops the old subtree;
//  - an entry under a missing parent gets synthetic parent directories, and
//    a lower-layer non-directory in the way is replaced by one (an overlay
//    layer's directory hides a lower file or symlink of the same name).
#include "inspect/tree.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

namespace trainimg::inspect {
namespace {

constexpr std::string_view kWhiteoutPrefix = ".wh.";
constexpr std::string_view kOpaqueMarker = ".wh..wh..opq";
// Linux gives up after 40 symlinks in one lookup (ELOOP); so do we.
constexpr int kMaxSymlinkHops = 40;

std::string parent_of(const std::string& p) {
  auto slash = p.rfind('/');
  if (slash == 0 || slash == std::string::npos) return "/";
  return p.substr(0, slash);
}


std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

bool is_dir(const Entry& e) { return e.type == EntryType::Dir; }

class TreeBuilder : public LayerVisitor {
 public:
  TreeBuilder(const WantFn& want, const CaptureFn& capture) : want_(want), capture_(capture) {
    Entry root;
    root.path = "/";
    root.type = EntryType::Dir;
    root.mode = 0755;
    tree_.entries["/"] = root;
  }

  void begin_layer(const std::string& layer_id, size_t) override {
    layer_id_ = layer_id;
    written_.clear();
    written_set_.clear();
    indexed_ = 0;
  }

  bool entry(const Entry& e) override {
    const std::string_view name = std::string_view(e.path).substr(e.path.rfind('/') + 1);
    if (e.path != "/" && name.starts_with(kWhiteoutPrefix)) {
      apply_whiteout(parent_of(e.path), std::string(name));
      return false;
    }
    place(e);
    if (e.type == EntryType::Hardlink) {
      auto it = tree_.captured.find(e.link_target);
      if (it != tree_.captured.end()) tree_.captured[e.path] = it->second;
      return false;
    }
    return e.type == EntryType::File && want_ && want_(e);
  }

  bool may_want(const Entry& e) override { return e.type == EntryType::File && want_ && want_(e); }

  void content(const Entry& e, ContentReader& r) override {
    if (capture_) tree_.captured[e.path] = capture_(e, r);
  }

  MergedTree take() { return std::move(tree_); }

 private:
  void apply_whiteout(const std::string& dir, const std::string& name) {
    if (name == kOpaqueMarker) {
      for (const auto& child : tree_.children(dir)) remove_subtree(child, /*lower_only=*/true);
      return;
    }
    remove_subtree(join(dir, name.substr(kWhiteoutPrefix.size())), /*lower_only=*/true);
  }

  // Removes `path` and everything below it, recording each removed entry.
  // With lower_only, entries this layer wrote itself survive (a whiteout only
  // ever hides lower layers); a directory of this layer keeps its place while
  // its lower-layer children go.
  void remove_subtree(const std::string& path, bool lower_only) {
    if (path == "/") return;
    auto it = tree_.entries.find(path);
    if (it == tree_.entries.end()) return;
    const std::string prefix = path + "/";
    for (auto c = tree_.entries.lower_bound(prefix); c != tree_.entries.end() && c->first.starts_with(prefix);) {
      if (lower_only && written_here(&c->second)) {
        ++c;
        continue;
      }
      c = erase(c);
    }
    if (!(lower_only && written_here(&it->second))) erase(it);
  }

  std::map<std::string, Entry>::iterator erase(std::map<std::string, Entry>::iterator it) {
    last_dir_.clear();  // it may have been that directory (or below it)
    tree_.removed.push_back(it->second);
    tree_.removed_by[it->first] = layer_id_;
    tree_.captured.erase(it->first);
    return tree_.entries.erase(it);
  }

  void ensure_dir(const std::string& dir) {
    if (dir == "/") return;
    auto it = tree_.entries.find(dir);
    if (it != tree_.entries.end() && is_dir(it->second)) return;
    ensure_dir(parent_of(dir));
    if (it != tree_.entries.end()) erase(it);  // a file/symlink in the way
    Entry d;
    d.path = dir;
    d.type = EntryType::Dir;
    d.mode = 0755;
    d.layer = layer_id_;
    written_.push_back(&(tree_.entries[dir] = d));
  }

  void place(const Entry& e) {
    if (e.path == "/") {
      if (is_dir(e)) tree_.entries["/"] = e;  // root metadata only; never a file
      return;
    }
    // Members come grouped by directory: the parent checked for the previous
    // entry is usually this one's too (last_dir_ is cleared by every erase).
    const std::string_view parent =
        std::string_view(e.path).substr(0, std::max<size_t>(e.path.rfind('/'), 1));
    if (parent != last_dir_) {
      ensure_dir(std::string(parent));
      last_dir_ = parent;
    }
    auto it = tree_.entries.lower_bound(e.path);
    if (it != tree_.entries.end() && it->first == e.path) {
      if (is_dir(it->second) != is_dir(e)) {
        remove_subtree(e.path, /*lower_only=*/false);  // type change drops the subtree
        written_.push_back(&tree_.entries.emplace(e.path, e).first->second);
      } else {
        tree_.captured.erase(e.path);  // a new copy of the file: old facts are stale
        it->second = e;
        written_.push_back(&it->second);
      }
    } else {
      written_.push_back(&tree_.entries.emplace_hint(it, e.path, e)->second);
    }
  }

  const WantFn& want_;
  const CaptureFn& capture_;
  MergedTree tree_;
  // Entries the current layer wrote (whiteouts spare them), by node: a
  // vector, made a set only when a whiteout asks (rare). A pointer left by
  // an erased node can only be reused by a node of this layer too, since
  // lower layers' nodes were all allocated before it began.
  bool written_here(const Entry* e) {
    for (; indexed_ < written_.size(); ++indexed_) written_set_.insert(written_[indexed_]);
    return written_set_.count(e) > 0;
  }
  std::vector<const Entry*> written_;
  std::unordered_set<const Entry*> written_set_;
  size_t indexed_ = 0;
  std::string last_dir_;  // a directory known to be in the tree (see place())
  std::string layer_id_;
};

}  // namespace

namespace {

// True when every '/'-separated part of s is a plain name (not empty, "."
// or ".."); one trailing '/' is allowed. Such a name needs no rewriting.
bool plain_parts(std::string_view s) {
  size_t start = 0;
  while (start < s.size()) {
    size_t slash = std::min(s.find('/', start), s.size());
    size_t len = slash - start;
    if (len == 0 || (s[start] == '.' && (len == 1 || (len == 2 && s[start + 1] == '.')))) return false;
    start = slash + 1;
  }
  return true;
}

}  // namespace

std::string normalize_path(const std::string& p) {
  // Fast path (nearly every tar member name): "usr/lib/" -> "/usr/lib".
  std::string_view v = p;
  if (!v.empty() && v[0] == '/') v.remove_prefix(1);
  if (!v.empty() && plain_parts(v)) {
    if (v.back() == '/') v.remove_suffix(1);
    std::string out;
    out.reserve(v.size() + 1);
    out += '/';
    out += v;
    return out;
  }
  std::vector<std::string_view> parts;
  std::string_view rest = p;
  while (!rest.empty()) {
    auto slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string out;
  for (auto part : parts) {
    out += '/';
    out += part;
  }
  return out.empty() ? "/" : out;
}

const Entry* MergedTree::lookup(const std::string& path) const {
  auto it = entries.find(normalize_path(path));
  return it == entries.end() ? nullptr : &it->second;
}

std::optional<std::string> MergedTree::resolve(const std::string& path) const {
  // Components still to walk, last one at the back.
  std::vector<std::string> todo;
  auto push_components = [&todo](const std::string& p) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= p.size()) {
      auto slash = p.find('/', start);
      if (slash == std::string::npos) slash = p.size();
      if (slash > start) parts.push_back(p.substr(start, slash - start));
      start = slash + 1;
    }
    todo.insert(todo.end(), parts.rbegin(), parts.rend());
  };
  push_components(path);
  std::string cur = "/";
  int hops = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.back());
    todo.pop_back();
    if (part == ".") continue;
    if (part == "..") {
      cur = parent_of(cur);  // "/.." is "/": never above the image root
      continue;
    }
    std::string next = join(cur, part);
    for (;;) {
      auto it = entries.find(next);
      if (it == entries.end()) return std::nullopt;
      const Entry& e = it->second;
      if (e.type == EntryType::Hardlink) {
        if (++hops > kMaxSymlinkHops) return std::nullopt;
        next = normalize_path(e.link_target);
        continue;
      }
      if (e.type == EntryType::Symlink) {
        if (++hops > kMaxSymlinkHops || e.link_target.empty()) return std::nullopt;
        // Absolute targets are relative to the image root, not the host's.
        if (e.link_target[0] == '/') cur = "/";
        push_components(e.link_target);
        next.clear();
      }
      break;
    }
    if (next.empty()) continue;  // a symlink: its target's components are queued
    if (!todo.empty() && !is_dir(entries.at(next))) return std::nullopt;
    cur = next;
  }
  return cur;
}

std::vector<std::string> MergedTree::children(const std::string& dir) const {
  const std::string d = normalize_path(dir);
  const std::string prefix = d == "/" ? "/" : d + "/";
  std::vector<std::string> out;
  for (auto it = entries.lower_bound(prefix); it != entries.end() && it->first.starts_with(prefix); ++it) {
    if (it->first.size() > prefix.size() && it->first.find('/', prefix.size()) == std::string::npos)
      out.push_back(it->first);
  }
  return out;
}

MergedTree build_tree(ImageSource& src, const WantFn& want, const CaptureFn& capture) {
  TreeBuilder b(want, capture);
  src.walk(b);
  return b.take();
}

}  // namespace trainimg::inspect
