// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/merge.h"

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
std::string child_prefix(const std::string& dir) { return dir == "/" ? "/" : dir + "/"; }
std::string prefix_end(std::string prefix) {
  prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}

// An entry as the view keeps it: without its layer id (MergedNode::layer
// indexes the layer), which would cost a heap string per path.
Entry stored(const Entry& e) {
  Entry s = e;
  std::string().swap(s.layer);  // clear() would keep the buffer
  return s;
}

}  // namespace

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
  if (n.entry.type == EntryType::File && n.seq != kGeneratedSeq) replaced_files_.insert(n.seq);
  view_.erase(it);
}

void LayerMerger::remove_children(const std::string& dir, size_t below_layer) {
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
  if (it != view_.end() && it->second.layer < below_layer) erase(it);
  if (path != "/") remove_children(path, below_layer);
}

// overlayfs (and Docker's layer extraction) puts a directory where a parent is
// missing or is not a directory; the non-directory is hidden.
void LayerMerger::ensure_parents(const std::string& path, int64_t mtime) {
  std::vector<std::string> parents;
  for (std::string p = split_path(path).first; p != "/"; p = split_path(p).first) parents.push_back(p);
  for (auto it = parents.rbegin(); it != parents.rend(); ++it) {
    auto found = view_.find(*it);
    if (found != view_.end() && found->second.entry.type == EntryType::Dir) continue;
    if (found != view_.end()) erase(found);
    MergedNode n;
    n.entry.path = *it;
    n.entry.type = EntryType::Dir;
    n.entry.mode = 0755;
    n.entry.mtime = mtime;
    n.layer = layer_;
    view_[*it] = std::move(n);
  }
}

void LayerMerger::resolve_hardlink(MergedNode& n) {
  const std::string& target = n.entry.link_target;
  auto it = view_.find(target);
  if (it == view_.end())
    throw Error(layer_id_, "hard link " + n.entry.path + " -> " + target +
                               ": the target is not in this layer or a lower one");
  MergedNode& t = it->second;
  // Docker's extraction chmods, chowns and chtimes the link with its own
  // header, so the shared inode takes the link's metadata (checked against
  // `docker export`); the target path shows it too while it is that inode.
  const auto take_link_meta = [&](Entry& inode) {
    inode.mode = n.entry.mode;
    inode.uid = n.entry.uid;
    inode.gid = n.entry.gid;
    inode.mtime = n.entry.mtime;
  };
  switch (t.entry.type) {
    case EntryType::File:
      n.content_seq = t.seq;
      take_link_meta(t.entry);
      n.source = std::make_unique<Entry>(t.entry);
      break;
    case EntryType::Hardlink:
      n.content_seq = t.content_seq;
      take_link_meta(*t.source);
      n.source = std::make_unique<Entry>(*t.source);
      break;
    case EntryType::Dir:
      throw Error(layer_id_, "hard link " + n.entry.path + " -> " + target + ": the target is a directory");
    default: {  // a linked symlink, FIFO or device: an independent copy
      std::string path = n.entry.path;
      n.entry = t.entry;
      n.entry.path = std::move(path);
    }
  }
}

void LayerMerger::apply(const Entry& e, uint64_t seq) {
  auto [dir, name] = split_path(e.path);
  if (name.rfind(kWhiteout, 0) == 0) {
    if (name == kOpaque) {
      remove_children(dir, layer_);
    } else if (name.rfind(".wh..wh.", 0) != 0) {  // other .wh..wh.* are aufs bookkeeping
      remove_subtree(child_prefix(dir) + name.substr(kWhiteout.size()), layer_);
    }
    return;
  }
  MergedNode n;
  n.entry = stored(e);
  n.layer = layer_;
  n.seq = seq;
  n.content_seq = seq;
  if (e.path == "/") {
    if (e.type == EntryType::Dir) view_["/"] = std::move(n);
    return;
  }
  if (e.type == EntryType::Hardlink) resolve_hardlink(n);
  ensure_parents(e.path, e.mtime);
  auto it = view_.find(e.path);
  if (it != view_.end() && !(it->second.entry.type == EntryType::Dir && n.entry.type == EntryType::Dir))
    remove_subtree(e.path, kAllLayers);
  view_[e.path] = std::move(n);
}

void LayerMerger::put(const Entry& e, bool keep_dir) {
  auto it = view_.find(e.path);
  if (it != view_.end() && it->second.entry.type == EntryType::Dir) {
    if (keep_dir && e.type == EntryType::Dir) return;
  }
  if (e.path != "/") ensure_parents(e.path, e.mtime);
  it = view_.find(e.path);
  if (it != view_.end() && !(it->second.entry.type == EntryType::Dir && e.type == EntryType::Dir))
    remove_subtree(e.path, kAllLayers);
  MergedNode n;
  n.entry = stored(e);
  n.layer = layer_;
  view_[e.path] = std::move(n);
}

void LayerMerger::finish() {
  std::vector<std::pair<std::string, int64_t>> missing;
  for (const auto& [path, n] : view_) {
    if (path == "/") continue;
    auto parent = split_path(path).first;
    if (parent != "/" && view_.find(parent) == view_.end()) missing.emplace_back(path, n.entry.mtime);
  }
  for (const auto& [path, mtime] : missing) ensure_parents(path, mtime);
  if (view_.find("/") == view_.end()) {
    MergedNode root;
    root.entry.path = "/";
    root.entry.type = EntryType::Dir;
    root.entry.mode = 0755;
    view_["/"] = std::move(root);
  }
}

WritePlan plan_writes(MergedView& view) {
  WritePlan plan;
  for (const auto& [path, n] : view)
    if (n.entry.type == EntryType::File && n.seq != kGeneratedSeq) plan.content_owner[n.seq] = path;
  // Links are visited in path order, so the first path of a group whose
  // source is not final anywhere becomes its owner: deterministic output.
  for (auto& [path, n] : view) {
    if (n.entry.type != EntryType::Hardlink) continue;
    auto owner = plan.content_owner.find(n.content_seq);
    if (owner == plan.content_owner.end()) {
      plan.content_owner[n.content_seq] = path;
      n.entry = *n.source;
      n.entry.path = path;
      n.entry.type = EntryType::File;
      n.seq = n.content_seq;
      continue;
    }
    n.entry.link_target = owner->second;
    plan.links[path] = owner->second;
  }
  return plan;
}

}  // namespace trainimg::builder
