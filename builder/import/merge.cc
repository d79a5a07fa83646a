// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/merge.h"

#include <algorithm>
#include <vector>

#include "common/error.h"

namespace trainimg::builder {

using inspect::Entry;
using inspect::EntryType;

namespace {

constexpr std::string_view kWhiteout = ".wh.";
constexpr std::string_view kOpaque = ".wh..wh..opq";

// Keys of the children of `dir` (at any depth) are [prefix, prefix_end):
// "/a/" .. "/a0", since '0' follows '/'.
std::string child_prefix(const std::string& dir) {
  return dir == "/" ? "/" : dir + "/";
}
std::string prefix_end(std::string prefix) {
  prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}

}  // namespace

StoredEntry StoredEntry::of(const Entry& e) {
  StoredEntry s;
  s.type = e.type;
  s.mode = e.mode;
  s.uid = e.uid;
  s.gid = e.gid;
  s.size = e.size;
  s.mtime = e.mtime;
  s.rdev_major = e.rdev_major;
  s.rdev_minor = e.rdev_minor;
  s.link_target = e.link_target;
  if (!e.xattrs.empty()) s.xattrs = std::make_shared<const std::map<std::string, std::string>>(e.xattrs);
  return s;
}

Entry StoredEntry::at(const std::string& path) const {
  Entry e;
  fill(e, path);
  return e;
}

void StoredEntry::fill(Entry& e, std::string path) const {
  e.path = std::move(path);
  e.type = type;
  e.mode = mode;
  e.uid = uid;
  e.gid = gid;
  e.size = size;
  e.mtime = mtime;
  e.rdev_major = rdev_major;
  e.rdev_minor = rdev_minor;
  e.link_target = link_target;
  if (xattrs)
    e.xattrs = *xattrs;
  else
    e.xattrs.clear();
}

std::pair<std::string, std::string> split_path(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return {"/", path};
  return {slash == 0 ? std::string("/") : path.substr(0, slash), path.substr(slash + 1)};
}

void LayerMerger::begin_layer(size_t index, std::string layer_id) {
  layer_ = index;
  layer_id_ = std::move(layer_id);
}

void LayerMerger::erase(MergedView::iterator it) {
  const MergedNode& n = it->second;
  if (n.written_below) written_replaced_ = true;
  view_.erase(it);
  ++erased_;
}

void LayerMerger::touch_written(std::string_view path) {
  if (was_written(path)) written_replaced_ = true;
}

void LayerMerger::drop_written(const std::string& path, uint64_t seq) {
  auto it = view_.find(path);
  if (it == view_.end() || it->second.seq != seq || it->second.entry.type != EntryType::File) return;
  newest_written_mtime_ = std::max(newest_written_mtime_, it->second.entry.mtime);
  if (auto parent = view_.find(split_path(path).first); parent != view_.end()) parent->second.written_below++;
  view_.erase(it);
  ++erased_;  // a file: never a parent, but counted all the same
  written_.insert(path, seq);
}

void LayerMerger::remove_children(const std::string& dir, size_t below_layer) {
  if (below_layer > 0)
    if (auto d = view_.find(dir); d != view_.end() && d->second.written_below) written_replaced_ = true;
  const std::string prefix = child_prefix(dir);
  auto it = view_.lower_bound(prefix);
  const auto end = view_.lower_bound(prefix_end(prefix));
  while (it != end) {
    auto next = std::next(it);
    if (it->first != "/" && it->second.layer < below_layer) erase(it);
    it = next;
  }
}

void LayerMerger::remove_subtree(const std::string& path, size_t below_layer) {
  auto it = view_.find(path);
  if (it == view_.end()) {
    if (below_layer > 0) touch_written(path);
  } else if (it->second.layer < below_layer) {
    erase(it);
  }
  if (path != "/") remove_children(path, below_layer);
}

// overlayfs (and Docker's layer extraction) puts a directory where a parent is
// missing or is not a directory; the non-directory is hidden.
void LayerMerger::ensure_parents(const std::string& path, int64_t mtime) {
  const size_t slash = path.rfind('/');
  if (slash == 0 || slash == std::string::npos) return;  // the root's child
  const std::string_view parent(path.data(), slash);
  if (parent == last_parent_ && erased_ == last_parent_erased_) return;  // still there, and all above it
  ensure_parents_slow(path, mtime);
  last_parent_.assign(parent);
  last_parent_erased_ = erased_;
}

void LayerMerger::ensure_parents_slow(const std::string& path, int64_t mtime) {
  std::vector<std::string> parents;
  for (std::string p = split_path(path).first; p != "/"; p = split_path(p).first) parents.push_back(p);
  for (auto it = parents.rbegin(); it != parents.rend(); ++it) {
    auto found = view_.find(*it);
    if (found != view_.end() && found->second.entry.type == EntryType::Dir) continue;
    if (found != view_.end())
      erase(found);
    else
      touch_written(*it);
    MergedNode n;
    n.entry.type = EntryType::Dir;
    n.entry.mode = 0755;
    n.entry.mtime = mtime;
    n.layer = layer_;
    view_[*it] = std::move(n);
  }
}

void LayerMerger::resolve_hardlink(MergedNode& n, const std::string& path) {
  const std::string& target = n.entry.link_target;
  auto it = view_.find(target);
  if (it == view_.end()) {
    if (const uint64_t* seq = written_.find(target)) {  // its bytes are in the image at `target`
      n.content_seq = *seq;
      return;
    }
  }
  if (it == view_.end())
    throw Error(layer_id_,
                "hard link " + path + " -> " + target + ": the target is not in this layer or a lower one");
  MergedNode& t = it->second;
  // Docker's extraction chmods, chowns and chtimes the link with its own
  // header, so the shared inode takes the link's metadata (checked against
  // `docker export`); the target path shows it too while it is that inode.
  const auto take_link_meta = [&](auto& inode) {
    inode.mode = n.entry.mode;
    inode.uid = n.entry.uid;
    inode.gid = n.entry.gid;
    inode.mtime = n.entry.mtime;
  };
  switch (t.entry.type) {
    case EntryType::File:
      n.content_seq = t.seq;
      take_link_meta(t.entry);
      n.source = std::make_unique<Entry>(t.entry.at(target));
      break;
    case EntryType::Hardlink:
      n.content_seq = t.content_seq;
      if (!t.source) {  // a link to a dropped file: to the path that holds it
        n.entry.link_target = t.entry.link_target;
        break;
      }
      take_link_meta(*t.source);
      n.source = std::make_unique<Entry>(*t.source);
      break;
    case EntryType::Dir:
      throw Error(layer_id_, "hard link " + path + " -> " + target + ": the target is a directory");
    default:  // a linked symlink, FIFO or device: an independent copy
      n.entry = t.entry;
  }
}

void LayerMerger::apply(const Entry& e, uint64_t seq) {
  if (std::string_view(e.path).substr(e.path.rfind('/') + 1).starts_with(kWhiteout)) {
    auto [dir, name] = split_path(e.path);
    if (name == kOpaque) {
      remove_children(dir, layer_);
    } else if (name.rfind(".wh..wh.", 0) != 0) {  // other .wh..wh.* are aufs bookkeeping
      remove_subtree(child_prefix(dir) + name.substr(kWhiteout.size()), layer_);
    }
    return;
  }
  MergedNode n;
  n.entry = StoredEntry::of(e);
  n.layer = layer_;
  n.seq = seq;
  n.content_seq = seq;
  if (e.path == "/") {
    if (e.type == EntryType::Dir) view_["/"] = std::move(n);
    return;
  }
  if (e.type == EntryType::Hardlink) resolve_hardlink(n, e.path);
  ensure_parents(e.path, e.mtime);
  // One search (none for a walk in the view's order): the place of e.path.
  auto it = lower_bound(e.path);
  if (it == view_.end() || it->first != e.path) {
    touch_written(e.path);
    it = view_.emplace_hint(it, e.path, std::move(n));
  } else if (!(it->second.entry.type == EntryType::Dir && n.entry.type == EntryType::Dir)) {
    remove_subtree(e.path, kAllLayers);
    it = view_.insert_or_assign(e.path, std::move(n)).first;
  } else {
    n.written_below = it->second.written_below;
    it->second = std::move(n);
  }
  last_ = it;
  last_erased_ = erased_;
  has_last_ = true;
}

MergedView::iterator LayerMerger::lower_bound(const std::string& path) {
  if (has_last_ && last_erased_ == erased_ && last_->first < path) {
    auto next = std::next(last_);
    if (next == view_.end() || !(next->first < path)) return next;
  }
  return view_.lower_bound(path);
}

void LayerMerger::put(const Entry& e, bool keep_dir) {
  auto it = view_.find(e.path);
  if (it != view_.end() && it->second.entry.type == EntryType::Dir) {
    if (keep_dir && e.type == EntryType::Dir) return;
  }
  if (e.path != "/") ensure_parents(e.path, e.mtime);
  it = view_.find(e.path);
  MergedNode n;
  if (it == view_.end()) touch_written(e.path);
  if (it != view_.end() && !(it->second.entry.type == EntryType::Dir && e.type == EntryType::Dir))
    remove_subtree(e.path, kAllLayers);
  else if (it != view_.end())
    n.written_below = it->second.written_below;
  n.entry = StoredEntry::of(e);
  n.layer = layer_;
  view_[e.path] = std::move(n);
}

void LayerMerger::finish() {
  std::vector<std::pair<std::string, int64_t>> missing;
  std::string_view present;  // the parent last found: siblings come together
  for (const auto& [path, n] : view_) {
    if (path == "/") continue;
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0) continue;  // the root's child
    const std::string_view parent(path.data(), slash);
    if (parent == present) continue;
    if (auto it = view_.find(parent); it != view_.end())
      present = it->first;
    else
      missing.emplace_back(path, n.entry.mtime);
  }
  for (const auto& [path, mtime] : missing) ensure_parents(path, mtime);
  if (view_.find("/") == view_.end()) {
    MergedNode root;
    root.entry.type = EntryType::Dir;
    root.entry.mode = 0755;
    view_["/"] = std::move(root);
  }
}

const std::string* WritePlan::owner(uint64_t seq) const {
  auto it = std::lower_bound(content_owner.begin(), content_owner.end(), seq,
                             [](const Owner& o, uint64_t s) { return o.seq < s; });
  return it != content_owner.end() && it->seq == seq ? &it->path() : nullptr;
}

WritePlan plan_writes(MergedView& view) {
  WritePlan plan;
  for (auto it = view.begin(); it != view.end(); ++it)
    if (it->second.entry.type == EntryType::File && it->second.seq != kGeneratedSeq)
      plan.content_owner.push_back({it->second.seq, it});
  std::sort(plan.content_owner.begin(), plan.content_owner.end());
  // Links are visited in path order, so the first path of a group whose
  // source is not final anywhere becomes its owner: deterministic output.
  std::map<uint64_t, MergedView::iterator> link_owners;  // such groups (few)
  for (auto at = view.begin(); at != view.end(); ++at) {
    auto& [path, n] = *at;
    if (n.entry.type != EntryType::Hardlink) continue;
    const std::string* owner = plan.owner(n.content_seq);
    if (!owner)
      if (auto it = link_owners.find(n.content_seq); it != link_owners.end()) owner = &it->second->first;
    if (!owner && !n.source) {  // its source was written, dropped, is final
      plan.links[path] = n.entry.link_target;
      continue;
    }
    if (!owner) {
      link_owners.emplace(n.content_seq, at);
      n.entry = StoredEntry::of(*n.source);
      n.entry.type = EntryType::File;
      n.seq = n.content_seq;
      continue;
    }
    n.entry.link_target = *owner;
    plan.links[path] = *owner;
  }
  for (const auto& [seq, at] : link_owners) plan.content_owner.push_back({seq, at});
  std::sort(plan.content_owner.begin(), plan.content_owner.end());
  return plan;
}

}  // namespace trainimg::builder
