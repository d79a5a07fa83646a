// SPDX-License-Identifier: GPL-3.0-or-later
// build_tree(): applies layers the way overlayfs-based container runtimes
// see them (OCI image spec, "Applying Changesets" and "Whiteouts"):
//  - `.wh.NAME` removes NAME and its subtree as found in LOWER layers;
//  - `.wh..wh..opq` in DIR hides every lower-layer child of DIR;
//    entries of the same layer are never hidden by that layer's whiteouts,
//    whatever their order inside the tar (a lower directory holding some of
//    them stays, as the directory they imply);
//  - a later entry replaces an earlier one; a non-directory replacing a
//    directory (or the reverse) drops the old subtree;
//  - an entry under a missing parent gets synthetic parent directories, and
//    a lower-layer non-directory in the way is replaced by one (an overlay
//    layer's directory hides a lower file or symlink of the same name).
#include "inspect/tree.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "common/error.h"

namespace trainimg::inspect {
namespace {

constexpr std::string_view kWhiteoutPrefix = ".wh.";
constexpr std::string_view kOpaqueMarker = ".wh..wh..opq";
// Linux gives up after 40 symlinks in one lookup (ELOOP); so do we.
constexpr int kMaxSymlinkHops = 40;
constexpr uint64_t kEmpty = UINT64_MAX, kTomb = UINT64_MAX - 1;

size_t hash_of(uint32_t parent, std::string_view name) {
  return std::hash<std::string_view>{}(name) ^ (static_cast<size_t>(parent) * 0x9E3779B97F4A7C15ull);
}

std::string_view parent_of(std::string_view p) {
  return p.substr(0, std::max<size_t>(p.rfind('/'), 1));
}
std::string_view base_of(std::string_view p) {
  return p.substr(p.rfind('/') + 1);
}

// Calls fn(component) for each '/'-separated part of a normalised path.
template <typename Fn>
bool each_component(std::string_view path, Fn fn) {
  size_t pos = 1;
  while (pos < path.size()) {
    size_t slash = std::min(path.find('/', pos), path.size());
    if (!fn(path.substr(pos, slash - pos))) return false;
    pos = slash + 1;
  }
  return true;
}

}  // namespace

// ---- the stored view ---------------------------------------------------------

MergedTree::MergedTree() {
  Node root{};
  root.parent = root.first_child = root.next = root.prev = kNone;
  root.type = EntryType::Dir;
  root.mode = 0755;
  root.live = true;
  nodes_.push_back(root);
  live_ = 1;
}

void* MergedTree::alloc_block(size_t bytes) {
  constexpr size_t kHuge = 2u << 20;
  void* p = nullptr;
  if (bytes >= kHuge / 2) {
    bytes = (bytes + kHuge - 1) / kHuge * kHuge;
    p = std::aligned_alloc(kHuge, bytes);
    if (p) ::madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without THP it is plain memory
  } else {
    p = std::malloc(bytes);
  }
  if (!p) throw std::bad_alloc();
  return p;
}

void MergedTree::BlockFree::operator()(void* p) const noexcept {
  std::free(p);
}

void MergedTree::reserve(size_t n) {
  if (n * 24 > names_cap_) grow_names(n * 24);  // untouched pages cost nothing
  size_index(n);
}

void MergedTree::size_index(size_t n, bool rebuild) {
  size_t want = std::bit_ceil(std::max<size_t>(1024, n * 2 + 2));  // load <= 1/2
  if (want <= index_size_ && !rebuild) return;
  want = std::max(want, index_size_);
  {
    index_.reset(static_cast<uint64_t*>(alloc_block(want * sizeof(uint64_t))));
    index_size_ = want;
    std::memset(index_.get(), 0xff, want * sizeof(uint64_t));  // kEmpty
    index_used_ = 0;
    for (uint32_t i = 1; i < nodes_.size(); ++i)
      if (nodes_[i].live) index_insert(i);
  }
}

std::string MergedTree::path_of(uint32_t n) const {
  if (n == 0) return "/";
  std::vector<uint32_t> chain;
  size_t len = 0;
  for (uint32_t c = n; c != 0; c = nodes_[c].parent) {
    chain.push_back(c);
    len += nodes_[c].name_len + 1;
  }
  std::string out;
  out.reserve(len);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    out += '/';
    out += name_of(*it);
  }
  return out;
}

TreeEntry MergedTree::view(uint32_t n) const {
  const Node& x = nodes_[n];
  TreeEntry e;
  e.type = x.type;
  e.mode = x.mode;
  e.size = x.size;
  if (x.type == EntryType::CharDev || x.type == EntryType::BlockDev) {
    e.size = 0;
    e.rdev_major = static_cast<uint32_t>(x.size >> 32);
    e.rdev_minor = static_cast<uint32_t>(x.size);
  }
  e.link_target = std::string_view(names_.get() + x.link_off, x.link_len);
  e.layer = layers_[x.layer];
  return e;
}

size_t MergedTree::slot_of(uint32_t parent, std::string_view name) const {
  const size_t mask = index_size_ - 1;
  const uint64_t h = hash_of(parent, name), tag = h >> 32;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint64_t s = index_.get()[i];
    if (s == kEmpty) return i;
    if (s == kTomb || s >> 32 != tag) continue;
    const auto n = static_cast<uint32_t>(s);
    if (nodes_[n].parent == parent && name_of(n) == name) return i;
  }
}

uint32_t MergedTree::child(uint32_t parent, std::string_view name) const {
  if (lister_) ensure_loaded(parent);
  size_t slot;
  return child_slot(parent, name, slot);
}

void MergedTree::ensure_loaded(uint32_t n) const {
  if (!lister_ || nodes_[n].loaded || !nodes_[n].live || nodes_[n].type != EntryType::Dir) return;
  // The tree object itself is never const while being built or queried by
  // its owner; filling in a directory changes no answer, only memory.
  auto* self = const_cast<MergedTree*>(this);
  self->nodes_[n].loaded = true;
  const auto layer = static_cast<uint32_t>(layers_.size() - 1);  // the only layer
  for (const Entry& e : lister_->list(path_of(n))) {
    const std::string_view name = base_of(e.path);
    size_t slot;
    if (name.empty() || self->child_slot(n, name, slot) != kNone) continue;
    self->add(n, name, e, layer, slot);
  }
}

uint32_t MergedTree::child_slot(uint32_t parent, std::string_view name, size_t& slot) const {
  slot = SIZE_MAX;
  if (index_size_ == 0) return kNone;
  slot = slot_of(parent, name);
  uint64_t s = index_.get()[slot];
  return s == kEmpty ? kNone : static_cast<uint32_t>(s);
}

uint32_t MergedTree::append_name(std::string_view s) {
  if (names_size_ + s.size() > UINT32_MAX) throw Error("", "image too large: its names exceed 4 GiB");
  if (names_size_ + s.size() > names_cap_) grow_names(names_size_ + s.size());
  std::memcpy(names_.get() + names_size_, s.data(), s.size());
  const auto off = static_cast<uint32_t>(names_size_);
  names_size_ += s.size();
  return off;
}

void MergedTree::grow_names(size_t need) {
  const size_t cap = std::max({need, names_cap_ * 2, size_t{64} << 10});
  Block<char> bigger(static_cast<char*>(alloc_block(cap)));
  if (names_size_) std::memcpy(bigger.get(), names_.get(), names_size_);
  names_ = std::move(bigger);
  names_cap_ = cap;
}

uint32_t MergedTree::find_node(std::string_view normalised) const {
  uint32_t cur = 0;
  bool found = each_component(normalised, [&](std::string_view part) {
    cur = child(cur, part);
    return cur != kNone;
  });
  return found ? cur : kNone;
}

void MergedTree::grow_index() {
  // Doubles when the live entries fill half the slots; otherwise the same
  // size again, which drops the tombstones.
  size_index(live_ + 1, /*rebuild=*/true);
}

void MergedTree::index_insert(uint32_t n, size_t slot) {
  uint64_t* index = index_.get();
  const uint64_t h = hash_of(nodes_[n].parent, name_of(n));
  if ((index_used_ + 1) * 2 > index_size_) {
    grow_index();  // rebuilds, dropping tombstones: the slot is stale
    index = index_.get();
    slot = SIZE_MAX;
  }
  if (slot != SIZE_MAX) {  // the empty slot a probe for this very name ended on
    index[slot] = (h >> 32) << 32 | n;
    ++index_used_;
    return;
  }
  const size_t mask = index_size_ - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (index[i] == kEmpty) ++index_used_;
    if (index[i] == kEmpty || index[i] == kTomb) {
      index[i] = (h >> 32) << 32 | n;
      return;
    }
  }
}

void MergedTree::set(uint32_t n, const Entry& e, uint32_t layer) {
  Node& x = nodes_[n];
  x.type = e.type;
  x.mode = static_cast<uint16_t>(e.mode & 07777);
  x.size = e.type == EntryType::CharDev || e.type == EntryType::BlockDev
               ? uint64_t{e.rdev_major} << 32 | e.rdev_minor
               : e.size;
  x.layer = static_cast<uint16_t>(layer);
  if (e.link_target.empty()) {
    x.link_len = 0;
  } else if (x.link_len != e.link_target.size() ||
             std::string_view(names_.get() + x.link_off, x.link_len) != e.link_target) {
    x.link_off = append_name(e.link_target);
    x.link_len = static_cast<uint32_t>(e.link_target.size());
  }
}

uint32_t MergedTree::add(uint32_t parent, std::string_view name, const Entry& e, uint32_t layer,
                         size_t slot) {
  if (nodes_.size() >= kNone - 1) throw Error("", "image too large: more than 4 billion entries");
  const auto n = static_cast<uint32_t>(nodes_.size());
  Node x{};
  x.first_child = x.prev = kNone;
  x.live = true;
  x.parent = parent;
  x.name_off = append_name(name);
  x.name_len = static_cast<uint32_t>(name.size());
  x.next = nodes_[parent].first_child;
  if (x.next != kNone) nodes_[x.next].prev = n;
  nodes_[parent].first_child = n;
  nodes_.push_back(x);
  set(n, e, layer);
  index_insert(n, slot);
  ++live_;
  return n;
}

void MergedTree::unlink(uint32_t n) {
  Node& x = nodes_[n];
  if (x.prev != kNone)
    nodes_[x.prev].next = x.next;
  else
    nodes_[x.parent].first_child = x.next;
  if (x.next != kNone) nodes_[x.next].prev = x.prev;
  index_.get()[slot_of(x.parent, name_of(n))] = kTomb;
  x.live = false;
  x.prev = x.next = kNone;
  --live_;
}

std::optional<TreeEntry> MergedTree::lookup(std::string_view path) const {
  uint32_t n = find_node(normalize_path(std::string(path)));
  if (n == kNone) return std::nullopt;
  return view(n);
}

std::optional<std::string> MergedTree::resolve(const std::string& path) const {
  // Components still to walk, last one at the back.
  std::vector<std::string> todo;
  auto push_components = [&todo](std::string_view p) {
    size_t before = todo.size();
    size_t start = 0;
    while (start <= p.size()) {
      size_t slash = std::min(p.find('/', start), p.size());
      if (slash > start) todo.emplace_back(p.substr(start, slash - start));
      start = slash + 1;
    }
    std::reverse(todo.begin() + static_cast<long>(before), todo.end());
  };
  push_components(path);
  uint32_t cur = 0;
  int hops = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.back());
    todo.pop_back();
    if (part == ".") continue;
    if (part == "..") {
      if (cur != 0) cur = nodes_[cur].parent;  // "/.." is "/": never above the image root
      continue;
    }
    uint32_t next = child(cur, part);
    bool queued = false;
    for (;;) {
      if (next == kNone) return std::nullopt;
      const Node& x = nodes_[next];
      const std::string_view link(names_.get() + x.link_off, x.link_len);
      if (x.type == EntryType::Hardlink) {
        if (++hops > kMaxSymlinkHops) return std::nullopt;
        next = find_node(normalize_path(std::string(link)));
        continue;
      }
      if (x.type == EntryType::Symlink) {
        if (++hops > kMaxSymlinkHops || link.empty()) return std::nullopt;
        // Absolute targets are relative to the image root, not the host's.
        cur = link[0] == '/' ? 0 : x.parent;
        push_components(link);
        queued = true;
      }
      break;
    }
    if (queued) continue;  // a symlink: its target's components are queued
    if (!todo.empty() && nodes_[next].type != EntryType::Dir) return std::nullopt;
    cur = next;
  }
  return path_of(cur);
}

std::vector<std::string> MergedTree::children(const std::string& dir) const {
  std::vector<std::string> out;
  uint32_t n = find_node(normalize_path(dir));
  if (n == kNone) return out;
  ensure_loaded(n);
  for (uint32_t c = nodes_[n].first_child; c != kNone; c = nodes_[c].next) out.push_back(path_of(c));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> MergedTree::find_named(std::string_view name) const {
  std::vector<std::string> out;
  if (lister_) {
    if (std::find(remember_.begin(), remember_.end(), name) == remember_.end())
      throw std::logic_error("find_named(" + std::string(name) + "): not remembered by build_tree()");
    for (const auto& p : named_)
      if (base_of(p) == name && lookup(p)) out.push_back(p);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  for (uint32_t n = 1; n < nodes_.size(); ++n)
    if (nodes_[n].live && name_of(n) == name) out.push_back(path_of(n));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<RemovedEntry> MergedTree::removed() const {
  std::vector<RemovedEntry> out;
  for (uint32_t n = 1; n < nodes_.size(); ++n) {
    if (nodes_[n].live) continue;
    const TreeEntry x = view(n);
    RemovedEntry r;
    r.path = path_of(n);
    r.type = x.type;
    r.mode = x.mode;
    r.size = x.size;
    r.rdev_major = x.rdev_major;
    r.rdev_minor = x.rdev_minor;
    r.link_target = x.link_target;
    r.layer = x.layer;
    r.removed_by = layers_[nodes_[n].next];
    out.push_back(std::move(r));
  }
  // Node order is creation order: one path removed twice stays in that order.
  std::stable_sort(out.begin(), out.end(), [](const RemovedEntry& a, const RemovedEntry& b) { return a.path < b.path; });
  return out;
}

std::string MergedTree::removed_by(const std::string& path) const {
  std::string by;
  bool found = false;
  for (const auto& r : removed())
    if (r.path == path) {
      by = r.removed_by;
      found = true;
    }
  if (!found) throw std::out_of_range("removed_by(" + path + "): never removed");
  return by;
}

std::vector<std::string> MergedTree::paths() const {
  for (uint32_t n = 0; n < nodes_.size(); ++n) ensure_loaded(n);  // grows as it goes: every directory
  std::vector<std::string> out;
  out.reserve(live_);
  for (uint32_t n = 0; n < nodes_.size(); ++n)
    if (nodes_[n].live) out.push_back(path_of(n));
  std::sort(out.begin(), out.end());
  return out;
}

// ---- building it ---------------------------------------------------------------

class TreeBuilder : public LayerVisitor {
  static constexpr uint32_t kNone = MergedTree::kNone;

 public:
  TreeBuilder(const WantFn& want, const CaptureFn& capture, std::shared_ptr<DirLister> lister,
              const std::vector<std::string>& remember)
      : want_(want), capture_(capture), lazy_(lister != nullptr) {
    t_.lister_ = std::move(lister);
    t_.remember_ = remember;
  }

  void begin_layer(const std::string& layer_id, size_t) override {
    if (t_.layers_.size() > UINT16_MAX) throw Error("", "image has more than 65,535 layers");
    t_.layers_.push_back(layer_id);
    seq_ = static_cast<uint32_t>(t_.layers_.size() - 1);
    last_dir_.clear();
  }

  void expect_entries(uint64_t n) override {
    if (lazy_) return;  // nothing is kept per entry
    // Capped: a hostile super block may claim billions; the index grows anyway.
    t_.reserve(static_cast<size_t>(std::min<uint64_t>(n, 1u << 20)));
  }

  /// Thrown by entry() past MergedTree::kMaxEntries; build_tree() catches it.
  struct Stop {};

  bool entry(const Entry& e) override {
    const std::string_view name = base_of(e.path);
    if (lazy_) return lazy_entry(e, name);
    if (++seen_ > MergedTree::kMaxEntries) throw Stop{};
    if (e.path != "/" && name.starts_with(kWhiteoutPrefix)) {
      apply_whiteout(parent_of(e.path), name);
      return false;
    }
    // The index probe in place() nearly always misses the cache: start the
    // load now and let the caller's want() (a pure function of the entry)
    // run meanwhile.
    if (e.path != "/" && t_.index_size_ && !last_dir_.empty() && parent_of(e.path) == last_dir_)
      __builtin_prefetch(t_.index_.get() + (hash_of(last_dir_node_, name) & (t_.index_size_ - 1)));
    const bool want = e.type == EntryType::File && want_ && want_(e);
    place(e);
    if (e.type == EntryType::Hardlink) {
      auto it = t_.captured.find(e.link_target);
      if (it != t_.captured.end()) t_.captured[e.path] = it->second;
      return false;
    }
    return want;
  }

  bool may_want(const Entry& e) override { return e.type == EntryType::File && want_ && want_(e); }

  void content(const Entry& e, ContentReader& r) override {
    if (capture_) t_.captured[e.path] = capture_(e, r);
  }

  // A random-access source: keep the root's metadata, the captures and the
  // remembered names; directories are listed later, on demand. One layer,
  // so its whiteouts hide nothing (the lister skips them too).
  bool lazy_entry(const Entry& e, std::string_view name) {
    if (e.path == "/") {
      if (e.type == EntryType::Dir) t_.set(0, e, seq_);
      return false;
    }
    if (name.starts_with(kWhiteoutPrefix)) return false;
    if (std::find(t_.remember_.begin(), t_.remember_.end(), name) != t_.remember_.end())
      t_.named_.push_back(e.path);
    if (e.type == EntryType::Hardlink) {
      auto it = t_.captured.find(e.link_target);
      if (it != t_.captured.end()) t_.captured[e.path] = it->second;
      return false;
    }
    return e.type == EntryType::File && want_ && want_(e);
  }

  MergedTree take() {
    return std::move(t_);
  }

  void stopped() {
    t_.truncated = "the image holds more than " + std::to_string(MergedTree::kMaxEntries) +
                   " entries: only the first " + std::to_string(MergedTree::kMaxEntries) +
                   " were read (the walk stopped in layer " +
                   (t_.layers_.empty() ? std::string("?") : t_.layers_.back()) +
                   "); findings about the rest are missing or may be wrong";
  }

 private:
  using Node = MergedTree::Node;
  bool is_dir(uint32_t n) const { return t_.nodes_[n].type == EntryType::Dir; }

  void apply_whiteout(std::string_view dir, std::string_view name) {
    uint32_t d = t_.find_node(dir);
    if (d == kNone) return;
    if (name == kOpaqueMarker) {
      for (uint32_t c = t_.nodes_[d].first_child; c != kNone;) {
        uint32_t next = t_.nodes_[c].next;
        remove_subtree(c, /*lower_only=*/true);
        c = next;
      }
      return;
    }
    uint32_t c = t_.child(d, name.substr(kWhiteoutPrefix.size()));
    if (c != kNone) remove_subtree(c, /*lower_only=*/true);
  }

  // Removes node n and everything below it, recording each removed entry.
  // With lower_only, entries this layer wrote itself survive (a whiteout only
  // ever hides lower layers), and so does a directory holding any of them.
  // Iterative: a hostile image may nest deeper than the stack allows.
  void remove_subtree(uint32_t n, bool lower_only) {
    if (n == 0) return;
    std::vector<uint32_t> order{n};  // pre-order: every node before its descendants
    for (size_t i = 0; i < order.size(); ++i)
      for (uint32_t c = t_.nodes_[order[i]].first_child; c != kNone; c = t_.nodes_[c].next)
        order.push_back(c);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Node& x = t_.nodes_[*it];
      if (x.first_child != kNone || (lower_only && x.layer == seq_)) continue;
      erase(*it);
    }
  }

  void erase(uint32_t n) {
    last_dir_.clear();  // it may have been that directory (or below it)
    if (!t_.captured.empty()) t_.captured.erase(t_.path_of(n));
    t_.unlink(n);
    t_.nodes_[n].next = seq_;  // a dead node keeps everything else: removed() reads it
  }

  // The node of directory `dir` (normalised), made (with its parents) when
  // missing; a non-directory in the way is replaced.
  uint32_t ensure_dir(std::string_view dir) {
    uint32_t cur = 0;
    each_component(dir, [&](std::string_view part) {
      size_t slot;
      uint32_t c = t_.child_slot(cur, part, slot);
      if (c != kNone && !is_dir(c)) {
        erase(c);
        c = kNone;
        slot = SIZE_MAX;  // the erase left a tombstone: probe again
      }
      if (c == kNone) {
        Entry d;
        d.type = EntryType::Dir;
        d.mode = 0755;
        c = t_.add(cur, part, d, seq_, slot);
      }
      cur = c;
      return true;
    });
    return cur;
  }

  void place(const Entry& e) {
    if (e.path == "/") {
      if (e.type == EntryType::Dir) t_.set(0, e, seq_);  // root metadata only; never a file
      return;
    }
    // Members come grouped by directory: the parent found for the previous
    // entry is usually this one's too (last_dir_ is cleared by every erase).
    const std::string_view parent = parent_of(e.path);
    if (last_dir_.empty() || parent != last_dir_) {
      last_dir_node_ = ensure_dir(parent);
      last_dir_ = parent;
    }
    const uint32_t p = last_dir_node_;
    const std::string_view name = base_of(e.path);
    size_t slot;
    uint32_t c = t_.child_slot(p, name, slot);
    if (c == kNone) {
      t_.add(p, name, e, seq_, slot);
    } else if (is_dir(c) != (e.type == EntryType::Dir)) {
      remove_subtree(c, /*lower_only=*/false);  // type change drops the subtree
      t_.add(p, name, e, seq_, SIZE_MAX);
    } else {
      if (!t_.captured.empty()) t_.captured.erase(e.path);  // a new copy of the file: old facts are stale
      t_.set(c, e, seq_);
    }
  }

  const WantFn& want_;
  const CaptureFn& capture_;
  const bool lazy_;
  MergedTree t_;
  uint32_t seq_ = 0;      // this layer's index in t_.layers_
  uint64_t seen_ = 0;     // entries walked (not lazy), against MergedTree::kMaxEntries
  std::string last_dir_;  // a directory known to be in the tree (see place())
  uint32_t last_dir_node_ = 0;
};

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

bool is_normalized_path(std::string_view p) {
  if (p == "/") return true;
  return p.size() > 1 && p[0] == '/' && p.back() != '/' && plain_parts(p.substr(1));
}

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

MergedTree build_tree(ImageSource& src, const WantFn& want, const CaptureFn& capture,
                      const std::vector<std::string>& remember) {
  TreeBuilder b(want, capture, src.lister(), remember);
  try {
    src.walk(b);
  } catch (const TreeBuilder::Stop&) {
    b.stopped();
  }
  return b.take();
}

}  // namespace trainimg::inspect
