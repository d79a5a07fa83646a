// SPDX-License-Identifier: GPL-3.0-or-later
// The import pipeline: source -> merged view -> enroot's fix-ups and files ->
// sqsh::Writer on a partial file -> read-back -> rename -> sidecar.
//
// Passes. A layered source with more than one layer is read once: each
// layer (side by side where the source can read one alone) is merged
// (LayerMerger) and, as it is read, every regular file of it compressed into
// a segment of that layer (segments.h), before the merge knows which of them
// win; then only the blocks of the versions that won are copied into the
// image (docs/import.md, "One read per layer"). Block reuse reads a layer
// again only for a file the earlier image lacks. A single stream (dockerd's
// export, a one-layer image, a rootfs directory) is walked once, each file
// written as it comes; should that stream later replace or delete a file
// already written (a duplicate tar member), the output is thrown away and the
// source read again as a layered one, so no data block of the image belongs
// to a file no path uses (a fragment block may carry such a file's tail).
//
// Times. One reference time is the mtime of every file and directory the
// import generates: SOURCE_DATE_EPOCH when set; else, for dockerd://, the
// image's `created` (the export also carries what `docker create` wrote, with
// the clock's time, so its mtimes cannot be the reference); else the newest
// mtime of the merged image. When the reference comes from SOURCE_DATE_EPOCH
// or `created`, every later mtime is clamped to it, and for dockerd:// the
// entries `docker create` always writes get it, so the output is a function
// of the image alone (docs/import.md, "Reproducibility").
#include "builder/import/import.h"

#include <fcntl.h>
#include <malloc.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "builder/import/dockerd_export.h"
#include "builder/import/enroot_config.h"
#include "builder/import/fixup.h"
#include "builder/import/merge.h"
#include "builder/import/reuse_index.h"
#include "builder/import/segments.h"
#include "builder/import/via_enroot.h"
#include "builder/publish/publish.h"
#include "common/cpu_slots.h"
#include "common/cpus.h"
#include "common/error.h"
#include "common/fd.h"
#include "common/sha256.h"
#include "common/version_info.h"
#include "inspect/inspect.h"
#include "inspect/registry/registry.h"
#include "inspect/sources/source.h"

namespace trainimg::builder {

namespace {

using inspect::Entry;
using inspect::EntryType;

// Paths enroot's import writes itself (docker::configure) or Docker's init
// layer replaces: a single pass never writes the image's bytes for them.
const char* const kGeneratedPaths[] = {"/etc/environment", "/etc/rc",       "/etc/rc.local",   "/etc/fstab",
                                       "/etc/hosts",       "/etc/hostname", "/etc/resolv.conf"};

bool is_generated_path(const std::string& p) {
  return std::any_of(std::begin(kGeneratedPaths), std::end(kGeneratedPaths),
                     [&](const char* g) { return p == g; });
}

sqsh::NodeType node_type(EntryType t) {
  switch (t) {
    case EntryType::File: return sqsh::NodeType::File;
    case EntryType::Dir: return sqsh::NodeType::Dir;
    case EntryType::Symlink: return sqsh::NodeType::Symlink;
    case EntryType::Hardlink: return sqsh::NodeType::Hardlink;
    case EntryType::Fifo: return sqsh::NodeType::Fifo;
    case EntryType::CharDev: return sqsh::NodeType::CharDev;
    case EntryType::BlockDev: return sqsh::NodeType::BlockDev;
    case EntryType::Socket: return sqsh::NodeType::Socket;
  }
  return sqsh::NodeType::File;
}

uint32_t clamp_time(int64_t t) {
  return static_cast<uint32_t>(std::clamp<int64_t>(t, 0, UINT32_MAX));
}

sqsh::Node to_node(Entry e, const FixupOptions& fix, std::optional<int64_t> clamp) {
  enroot_fixup(e, fix);
  if (clamp && e.mtime > *clamp) e.mtime = *clamp;
  sqsh::Node n;
  n.path = e.path;
  n.type = node_type(e.type);
  n.mode = e.mode;
  n.uid = e.uid;
  n.gid = e.gid;
  n.size = e.size;
  n.mtime = clamp_time(e.mtime);
  n.rdev_major = e.rdev_major;
  n.rdev_minor = e.rdev_minor;
  n.link_target = e.link_target;
  n.xattrs = std::move(e.xattrs);
  return n;
}

sqsh::WriterOptions writer_options(const ImportOptions& o, uint32_t mtime) {
  sqsh::WriterOptions w;
  w.compressor = o.compressor;
  w.level = o.level;
  w.block_size = o.block_size;
  if (o.enroot_defaults) {  // enroot: mksquashfs -comp lzo -noD (128 KiB blocks: mksquashfs's default)
    w.compressor = sqsh::Compressor::Lzo;
    w.compress_data = false;
    w.block_size = 128u * 1024;
  }
  w.num_workers = o.jobs;
  w.all_root = true;
  w.mtime = mtime;
  w.clamp_mtimes = o.source_date_epoch.has_value();
  w.exportable = true;
  w.deduplicate = true;
  w.keep_xattrs = o.keep_xattrs;
  return w;
}

// --jobs, 0 meaning every core.
unsigned import_jobs(const ImportOptions& o) {
  return o.jobs ? o.jobs : usable_cpus();
}

// Everything one attempt at writing the image shares.
struct Job {
  const ImportOptions& opt;
  const ImportProgressFn& progress;
  inspect::ImageSource& src;
  inspect::ImageDescription desc;
  bool daemon_export = false;  ///< dockerd's flattened export: init layer already in it
  FixupOptions fix;
  /// The reference time when known before the walk (SOURCE_DATE_EPOCH, or the
  /// image's `created` for dockerd://): later mtimes are clamped to it.
  std::optional<int64_t> clamp;
  const char* reference_from = nullptr;  ///< for the sidecar
  int64_t reference = 0;                 ///< set by reference_time()
  ImportProgress prog{};
  /// --jobs: the threads that inflate or compress hold one of these.
  CpuSlots* cpu_slots = nullptr;
  /// The threads each pool starts: --jobs, else usable_cpus() (counted once).
  unsigned threads = 1;
  /// Records this import's reuse index (null: none is written).
  ReuseIndexWriter* index = nullptr;
  /// The earlier image that lends blocks (null: none).
  struct Reuse* reuse = nullptr;
  /// Walk position of each layer's first entry (filled by the merge pass).
  std::vector<uint64_t> layer_first{};
  /// The layers the merge pass read, their files compressed as it read them
  /// (by layer index; empty for the layers it did not read).
  std::vector<std::optional<CompressedLayer>> compressed{};

  sqsh::Node node(const Entry& e) const { return to_node(e, fix, clamp); }
  /// A view's node at `path` (its key).
  sqsh::Node node(const StoredEntry& e, const std::string& path) const {
    return to_node(e.at(path), fix, clamp);
  }

  /// Serialises the reports of the walk and of the source's download threads.
  std::mutex report_mu{};

  void report(const std::string& phase) {
    std::lock_guard<std::mutex> lock(report_mu);
    prog.phase = phase;
    prog.image_digest = desc.digest;
    if (progress) progress(prog);
  }

  /// A file's bytes written (from any thread).
  void file_written(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(report_mu);
    prog.files++;
    prog.bytes += bytes;
    if (prog.files % 1024 == 0) {  // in the phase that writes it: "merge" (one read per layer) or "data"
      prog.image_digest = desc.digest;
      if (progress) progress(prog);
    }
  }

  void report_download(const inspect::TransferProgress& t) {
    std::lock_guard<std::mutex> lock(report_mu);
    ImportProgress p;
    p.phase = "download";
    p.image_digest = desc.digest;
    p.files = t.blobs;
    p.bytes = t.bytes;
    p.total_files = t.total_blobs;
    p.total_bytes = t.total_bytes;
    if (progress) progress(p);
  }
};

// The earlier image chosen to lend its blocks.
struct Reuse {
  std::string path;
  std::unique_ptr<sqsh::Image> image;
  ReuseIndex index;
  size_t shared = 0;            ///< its lowest `shared` layers are this image's too
  uint64_t shared_entries = 0;  ///< walk positions below this lie in them
  int writer_source = -1;       ///< per attempt: its id in the sqsh::Writer
  nlohmann::ordered_json summary;
};

// Passes on only the layers `want` names (sources that cannot skip a layer
// still walk it; what comes of it is dropped here).
// `before` (if set) runs once, before the first wanted layer reaches `v`:
// lower layers that come from elsewhere (block reuse's index) are replayed
// there, once the source has started fetching (a registry's downloads run
// meanwhile). The caller runs it after the walk when it has not run.
class LayerFilter : public inspect::LayerVisitor {
 public:
  LayerFilter(inspect::LayerVisitor& v, const std::vector<bool>& want,
              std::function<void()>* before = nullptr)
      : v_(v), want_(want), before_(before) {}
  bool want_layer(const std::string& id, size_t i) override {
    return (i >= want_.size() || want_[i]) && v_.want_layer(id, i);
  }
  void expect_entries(uint64_t n) override { v_.expect_entries(n); }
  void begin_layer(const std::string& id, size_t i) override {
    on_ = i >= want_.size() || want_[i];
    if (on_ && before_ && *before_) std::exchange(*before_, nullptr)();
    if (on_) v_.begin_layer(id, i);
  }
  bool entry(const Entry& e) override { return on_ && v_.entry(e); }
  bool may_want(const Entry& e) override { return v_.may_want(e); }
  void content(const Entry& e, inspect::ContentReader& r) override {
    if (on_) v_.content(e, r);
  }
  void end_layer(const std::string& id, size_t i) override {
    if (on_) v_.end_layer(id, i);
  }

 private:
  inspect::LayerVisitor& v_;
  const std::vector<bool>& want_;
  std::function<void()>* before_;
  bool on_ = true;
};

// Streams one file's bytes into the writer, checking the size the header gave.
void copy_content(Job& job, sqsh::Writer& w, const sqsh::Node& node, inspect::ContentReader& r) {
  job.file_written(copy_file_content(w, node, node.path, r, job.desc.reference));
  // The merged view shrinks as files are written (docs/import.md) while
  // libsquashfs's per-file inodes grow on the writer's data thread, in that
  // thread's malloc arena, where the view's freed memory cannot serve them:
  // hand whole free pages back now and then. 500,000 files, two layers: peak
  // RSS 249 -> 219 MiB (docker:// cold 259 -> 222 MiB), for ~15 calls.
  if (job.prog.files % 32768 == 0) malloc_trim(0);
}

// Pass 1 of a layered source: metadata only.
class MergePass : public inspect::LayerVisitor {
 public:
  MergePass(Job& job, LayerMerger& m) : job_(job), m_(m) {}
  void begin_layer(const std::string& id, size_t index) override {
    m_.begin_layer(index, id);
    if (job_.layer_first.size() <= index) job_.layer_first.resize(index + 1, seq_);
    job_.layer_first[index] = seq_;
    if (job_.index) job_.index->begin_layer(id);
  }
  bool entry(const Entry& e) override {
    if ((seq_ & 1023) == 0) check_interrupted(job_.desc.reference);
    if (job_.index) job_.index->entry(e);
    m_.apply(e, seq_++);
    return false;
  }
  uint64_t entries() const { return seq_; }

 private:
  Job& job_;
  LayerMerger& m_;
  uint64_t seq_ = 0;
};

// The merge pass over a walk in layer order that compresses each layer's
// files as it reads them (CompressedLayer), for the sources that cannot read
// a layer on its own: the same segments as the layers read side by side.
class CompressingMerge : public inspect::LayerVisitor {
 public:
  CompressingMerge(Job& job, MergePass& p, const SegmentOptions& so) : job_(job), p_(p), so_(so) {}
  void begin_layer(const std::string& id, size_t index) override {
    p_.begin_layer(id, index);
    c_.emplace(index, so_, segment_threads(so_.jobs, 1), done_);
    index_ = index;
  }
  bool entry(const Entry& e) override {
    p_.entry(e);
    return c_ && c_->entry(e);
  }
  void content(const Entry& e, inspect::ContentReader& r) override {
    if (c_) c_->content(e, r);
  }
  void end_layer(const std::string& id, size_t index) override {
    p_.end_layer(id, index);
    if (!c_) return;
    if (job_.compressed.size() <= index_) job_.compressed.resize(index_ + 1);
    job_.compressed[index_] = c_->finish();
    c_.reset();
  }

 private:
  Job& job_;
  MergePass& p_;
  const SegmentOptions& so_;
  const std::function<void(uint64_t)> done_ = [this](uint64_t bytes) { job_.file_written(bytes); };
  std::optional<LayerCompressor> c_;
  size_t index_ = 0;
};

// The single pass: merge and write each file as it comes.
class OnePass : public inspect::LayerVisitor {
 public:
  OnePass(Job& job, sqsh::Writer& w, LayerMerger& m) : job_(job), w_(w), m_(m) {}
  void begin_layer(const std::string& id, size_t index) override {
    m_.begin_layer(index, id);
    if (job_.index) job_.index->begin_layer(id);
  }
  bool entry(const Entry& e) override {
    const uint64_t s = seq_++;
    if ((s & 1023) == 0) check_interrupted(job_.desc.reference);
    if (job_.index) job_.index->entry(e);
    m_.apply(e, s);
    if (e.type != EntryType::File || e.size == 0 || enroot_excludes(e) || is_generated_path(e.path))
      return false;
    pending_ = s;
    return true;
  }
  void content(const Entry& e, inspect::ContentReader& r) override {
    sqsh::Node node = job_.node(e);
    node.tag = pending_;  // the index's walk position of these bytes
    copy_content(job_, w_, node, r);
    m_.drop_written(e.path, pending_);
  }
  uint64_t entries() const { return seq_; }

 private:
  Job& job_;
  sqsh::Writer& w_;
  LayerMerger& m_;
  uint64_t seq_ = 0;
  uint64_t pending_ = 0;
};

int64_t newest_mtime(const LayerMerger& m) {
  int64_t t = m.newest_written_mtime();
  for (const auto& [p, n] : m.view()) t = std::max(t, n.entry.mtime);
  return t;
}

// The reference time of one attempt, once the view is merged.
int64_t reference_time(Job& job, const LayerMerger& m) {
  job.reference = job.clamp ? *job.clamp : newest_mtime(m);
  return job.reference;
}

// What /etc/rc's first line names: enroot writes the source URI; a
// reproducible import names the image by its config digest, the same
// whether it came from a registry, an archive, a layout or the daemon.
std::string provenance(const Job& job) {
  bool by_digest = job.opt.provenance_by_digest || job.opt.source_date_epoch.has_value();
  return by_digest && !job.desc.config_digest.empty() ? job.desc.config_digest : job.opt.source;
}

// Docker's init layer and enroot's docker::configure, on the merged view.
// Returns the generated files' contents by path.
std::map<std::string, std::string> add_generated(Job& job, LayerMerger& m, int64_t mtime) {
  MergedView& v = m.view();
  if (job.daemon_export) {
    // What `docker create` wrote carries the clock, even when the clock is
    // behind the reference (an image `created` in the future).
    for (auto& [path, n] : v)
      if (docker_create_writes(path)) n.entry.mtime = mtime;
  } else {
    for (const Entry& e : docker_init_layer(mtime)) {
      auto it = v.find(e.path);
      if (e.type == EntryType::Dir) {
        m.put(e, /*keep_dir=*/true);
      } else if (it == v.end() || it->second.entry.type != EntryType::Dir) {
        m.put(e);  // Docker unlinks the image's file; a directory would survive
      }
    }
  }
  std::map<std::string, std::string> files = {{"/etc/fstab", enroot_fstab(job.desc.config)},
                                              {"/etc/environment", enroot_environment(job.desc.config)},
                                              {"/etc/rc", enroot_rc(job.desc.config, provenance(job))},
                                              {"/etc/rc.local", enroot_rc_local()}};
  m.put(make_dir("/etc", mtime), /*keep_dir=*/true);
  // `mkdir -p "${rootfs}${workdir}"`: through existing directories only (a
  // symlink on the way is followed by mkdir, and not emulated here).
  std::string wd = enroot_workdir(job.desc.config);
  if (wd.starts_with("/")) {
    std::string path;
    wd = inspect::normalize_path(wd);
    for (size_t pos = 1; wd != "/" && pos <= wd.size();) {
      size_t slash = std::min(wd.find('/', pos), wd.size());
      path = wd.substr(0, slash);
      pos = slash + 1;
      auto it = v.find(path);
      if (it == v.end())
        m.put(make_dir(path, mtime));
      else if (it->second.entry.type != EntryType::Dir)
        break;
    }
  }
  for (const auto& [path, text] : files) {
    // A shell redirection keeps an existing file's mode.
    auto it = v.find(path);
    // enroot's `>` fails on a directory ("Is a directory") and blocks on a
    // FIFO: it cannot import such an image, and replacing it would drop
    // what the image holds there.
    if (it != v.end()) {
      EntryType t = it->second.entry.type;
      if (t != EntryType::File && t != EntryType::Symlink && t != EntryType::Hardlink)
        throw Error(job.desc.reference,
                    path + " is " + (t == EntryType::Dir ? "a directory" : "not a regular file") +
                        " in the image: enroot writes its " + path + " there (enroot import fails on it)",
                    "remove or rename " + path + " in the image");
    }
    uint32_t mode = it != v.end() && it->second.entry.type == EntryType::File ? it->second.entry.mode : 0644;
    m.put(make_file(path, mode, text.size(), mtime));
  }
  return files;
}

void drop_excluded(MergedView& v) {
  std::erase_if(v, [](const auto& kv) { return enroot_excludes(kv.second.entry.type, kv.first); });
}

// Everything but the streamed file data (whose files left the view when they
// were written): directories, other nodes, empty and generated files, then
// hard links (their owners exist by then).
void write_tree(Job& job, sqsh::Writer& w, const MergedView& v,
                const std::map<std::string, std::string>& generated) {
  for (const auto& [path, n] : v)
    if (n.entry.type == EntryType::Dir) w.add(job.node(n.entry, path));
  for (const auto& [path, n] : v) {
    switch (n.entry.type) {
      case EntryType::Dir:
      case EntryType::Hardlink: break;
      case EntryType::File: {
        auto g = generated.find(path);
        sqsh::Node node = job.node(n.entry, path);
        if (n.seq == kGeneratedSeq && g != generated.end()) {
          w.begin_file(node);
          if (!g->second.empty()) w.write(g->second.data(), g->second.size());
          w.end_file();
        } else if (n.entry.size == 0) {
          w.begin_file(node);
          w.end_file();
        } else {
          throw Error(job.desc.reference, path + ": the source never delivered this file's data");
        }
        break;
      }
      default: w.add(job.node(n.entry, path));
    }
  }
  for (const auto& [path, n] : v)
    if (n.entry.type == EntryType::Hardlink) w.add_hardlink(path, n.entry.link_target);
}

struct Written {
  uint64_t entries = 0;
  unsigned passes = 0;
};

size_t layer_of(const Job& job, uint64_t seq) {
  auto it = std::upper_bound(job.layer_first.begin(), job.layer_first.end(), seq);
  return static_cast<size_t>(it - job.layer_first.begin()) - 1;
}

// Block reuse, after the merge: every planned file whose bytes come from a
// shared layer and that the earlier image holds is written from its blocks
// and leaves the plan and the view; a shared layer with any other file to
// write is walked after all (`want`). Reports phase "reuse".
void lend_blocks(Job& job, sqsh::Writer& w, MergedView& view, WritePlan& plan, std::vector<bool>& want) {
  Reuse& reuse = *job.reuse;
  std::vector<WritePlan::Owner> rest;
  uint64_t files = 0, bytes = 0;
  for (const WritePlan::Owner& o : plan.content_owner) {
    const uint64_t seq = o.seq;
    if (seq == kGeneratedSeq || seq >= reuse.shared_entries) {
      rest.push_back(o);
      continue;
    }
    auto it = o.node;
    const MergedNode& n = it->second;
    auto x = reuse.index.extents.find(seq);
    if (n.entry.size == 0 || x == reuse.index.extents.end() || x->second.size != n.entry.size) {
      if (n.entry.size > 0) want[layer_of(job, seq)] = true;  // the earlier image lacks these bytes
      rest.push_back(o);
      continue;
    }
    sqsh::Node node = job.node(n.entry, o.path());
    node.tag = seq;
    w.add_reused_file(node, reuse.writer_source, std::move(x->second));
    reuse.index.extents.erase(x);  // each walk position owns one path: never looked up again
    files++;
    bytes += n.entry.size;
    // Out of the view at once, as join_compressed() does: what it frees is
    // what the writer's next nodes take, rather than pages never touched
    // (their faults were a fifth of the main thread's time). `rest` holds
    // other nodes.
    view.erase(it);
  }
  plan.content_owner = std::move(rest);
  job.prog.files += files;
  job.prog.bytes += bytes;
  uint64_t not_fetched = 0;
  nlohmann::ordered_json ids = nlohmann::ordered_json::array();
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i]) continue;
    ids.push_back(job.desc.layers[i]);
    if (i < job.desc.layer_bytes.size()) not_fetched += job.desc.layer_bytes[i];
  }
  reuse.summary = {{"from", reuse.path},
                   {"shared_layers", reuse.shared},
                   {"layers_not_read", ids.size()},
                   {"layer_ids", ids},
                   {"files", files},
                   {"bytes", bytes},
                   {"bytes_not_fetched", not_fetched}};
  job.prog.reuse = reuse.summary;
  job.report("reuse");
  job.prog.reuse = nullptr;
}

SegmentOptions segment_options(const Job& job) {
  sqsh::WriterOptions wo = writer_options(job.opt, 0);
  wo.cpu_slots = job.cpu_slots;
  wo.num_workers = job.threads;
  return {.writer = wo,
          .output = job.opt.output,
          .reference = job.desc.reference,
          .jobs = job.threads,
          .share_blocks = shares_blocks(job.opt.output)};
}

// Joins the planned owners whose bytes the merge pass compressed (the
// layers it read: job.compressed) from their segments, in layer order, on
// the Writer's threads: only the blocks of the files the image keeps are
// copied. They leave the view and the plan; the rest (the layers it did not
// read, block reuse's) are the data pass's. Every segment is released.
void join_compressed(Job& job, sqsh::Writer& w, MergedView& view, WritePlan& plan) {
  std::vector<WritePlan::Owner> rest;
  CompressedLayer* c = nullptr;
  int id = -1;
  auto flush = [&] {  // the current layer's files are all added: copy them
    if (c && id >= 0) w.copy_reused_soon(id, std::shared_ptr<AtomicFile>(std::move(c->seg.file)));
    if (c) job.compressed[c->layer].reset();
    c = nullptr;
    id = -1;
  };
  for (const WritePlan::Owner& o : plan.content_owner) {  // ascending: layer by layer
    const uint64_t seq = o.seq;
    auto it = o.node;
    const MergedNode& n = it->second;
    const size_t layer = seq == kGeneratedSeq ? SIZE_MAX : layer_of(job, seq);
    if (layer == SIZE_MAX || n.entry.size == 0 || layer >= job.compressed.size() || !job.compressed[layer]) {
      rest.push_back(o);  // write_tree's, or the data pass's
      continue;
    }
    if (!c || c->layer != layer) {
      flush();
      c = &*job.compressed[layer];
    }
    sqsh::FileExtent* x = c->find(seq - job.layer_first[layer]);
    if (!x || x->size != n.entry.size) {  // not a file with bytes there: the data pass reads it
      rest.push_back(o);
      continue;
    }
    if (id < 0)
      id = w.add_reuse_source(c->seg.file->fd(),
                              job.opt.output + " (segment of layer " + std::to_string(layer) + ")",
                              c->seg.info, std::move(c->seg.fragments));
    sqsh::Node node = job.node(n.entry, o.path());
    node.tag = seq;
    w.add_reused_file(node, id, std::move(*x));
    job.prog.files++;
    job.prog.bytes += n.entry.size;
    // Out of the view at once (its node is the writer's now), so that the
    // two trees never both hold every file: no view of this key is read
    // again (`rest` holds other keys; the plan is replaced below).
    view.erase(it);
  }
  flush();
  job.compressed.clear();  // the segments of layers the image keeps nothing of
  plan.content_owner = std::move(rest);
  job.report("data");
}

// Pass 2: the bytes of the planned owners, each layer's into a segment of its
// own on a thread of its own (segments.h), joined in layer order. A file
// handed to the data pass leaves the view (and the plan). Returns whether it
// read the source (false: no file was left for it).
bool write_data(Job& job, const SegmentOptions& so, sqsh::Writer& w, MergedView& view, WritePlan& plan) {
  std::vector<LayerFiles> layers;
  std::vector<WritePlan::Owner> rest;
  for (const WritePlan::Owner& o : plan.content_owner) {  // ascending: layer by layer
    const uint64_t seq = o.seq;
    auto it = o.node;
    const MergedNode& n = it->second;
    if (seq == kGeneratedSeq || n.entry.size == 0) {  // write_tree's
      rest.push_back(o);
      continue;
    }
    const size_t layer = layer_of(job, seq);
    if (layers.empty() || layers.back().layer != layer)
      layers.push_back({.layer = layer,
                        .first_seq = job.layer_first[layer],
                        .blob_bytes = layer < job.desc.layer_bytes.size() ? job.desc.layer_bytes[layer] : 0,
                        .files = {}});
    const std::string& p = o.path();
    sqsh::Node node = job.node(n.entry, p);
    node.tag = seq;
    layers.back().files.push_back(
        {.seq = seq, .expect = n.source ? n.source->path : p, .node = std::move(node), .extent = {}});
    view.erase(it);  // as in join_compressed(): the file is the segment's now
  }
  plan.content_owner = std::move(rest);
  write_segments(
      job.src, layers, so, [&job](uint64_t bytes) { job.file_written(bytes); },
      [&](LayerFiles& l, Segment& seg) {
        const int id = w.add_reuse_source(seg.file->fd(),
                                          so.output + " (segment of layer " + std::to_string(l.layer) + ")",
                                          seg.info, std::move(seg.fragments));
        for (SegmentFile& f : l.files) w.add_reused_file(f.node, id, std::move(f.extent));
        std::vector<SegmentFile>().swap(l.files);
        // Copied now, while the other layers compress, on the Writer's
        // threads (the next segment is joined meanwhile), and closed once
        // copied: a segment file gone before the kernel wrote it back costs
        // the disk nothing.
        w.copy_reused_soon(id, std::shared_ptr<AtomicFile>(std::move(seg.file)));
      },
      // The earlier image's blocks (lend_blocks) are copied while the new
      // layers compress, ahead of their segments: their files are final.
      [&job, &w] {
        if (job.reuse) w.copy_reused_now(job.reuse->writer_source);
      });
  return !layers.empty();
}

// One attempt. Returns false when a single pass met a replaced file and the
// image must be written again in two passes.
bool write_image(Job& job, sqsh::Writer& w, bool two_pass, Written& out) {
  LayerMerger m;
  if (two_pass) {
    job.report("merge");
    job.layer_first.assign(job.desc.layers.size(), 0);
    MergePass p1(job, m);
    Reuse* reuse = job.reuse;
    std::vector<bool> want(job.desc.layers.size(), true);
    std::function<void()> replay_shared;
    if (reuse) {
      // The shared layers come from the index, never from the source.
      for (size_t i = 0; i < reuse->shared; ++i) want[i] = false;
      replay_shared = [&p1, reuse] {
        for (size_t i = 0; i < reuse->shared; ++i) {
          const ReuseIndex::Layer& l = reuse->index.layers[i];
          p1.begin_layer(l.id, i);
          reuse->index.for_each_entry(l, [&p1](const Entry& e) { p1.entry(e); });
          p1.end_layer(l.id, i);
        }
        reuse->index.drop_entries();  // the merger holds them now (peak RSS)
      };
      // The blocks of the shared layers' files OLD holds are copied, on the
      // Writer's thread of its own, while the merge works out which of them
      // the image keeps (most: those a new layer replaces or deletes become
      // unused bytes, counted in the sidecar) and until the data pass has its
      // new layers compressing (copy_reused_now waits for it there).
      std::vector<const sqsh::FileExtent*> files;
      files.reserve(reuse->index.extents.size());
      for (const auto& [seq, x] : reuse->index.extents)
        if (seq < reuse->shared_entries) files.push_back(&x);
      w.prefetch_reused(reuse->writer_source, files);
    }
    // Layers the source reads on their own (a registry's once it fetches
    // them) are read side by side and replayed in order; the others (a
    // compressed docker archive's) in one walk, which replays the shared
    // layers once the source has started.
    std::vector<size_t> read;
    for (size_t i = 0; i < want.size(); ++i)
      if (want[i]) read.push_back(i);
    // Either way each layer read is compressed as it is read, every file
    // with bytes, before the merge says which the image keeps: one read
    // per layer (docs/import.md, "One read per layer").
    const SegmentOptions so = segment_options(job);
    job.compressed.clear();
    job.compressed.resize(job.desc.layers.size());
    // A registry's layers are read side by side too, each as it downloads.
    auto each_alone = [&] {
      return std::all_of(read.begin(), read.end(), [&](size_t i) { return job.src.can_walk_layer(i); });
    };
    if (read.size() > 1 && !each_alone()) job.src.fetch_layers(want);
    // With block reuse the shared layers are replayed while the others
    // (often one new layer) are read and compressed, neither waiting for
    // the other: also when only one layer is read.
    if (!read.empty() && (read.size() > 1 || replay_shared) && each_alone()) {
      walk_layers_in_parallel(
          job.src, read, job.threads, job.desc.layers, p1, &so,
          [&job](uint64_t bytes) { job.file_written(bytes); },
          [&job](CompressedLayer& c) { job.compressed[c.layer] = std::move(c); },
          std::exchange(replay_shared, nullptr));
    } else {
      CompressingMerge cm(job, p1, so);
      LayerFilter f1(cm, want, &replay_shared);
      job.src.walk(f1);
    }
    if (replay_shared) replay_shared();  // no layer was read
    m.finish();
    auto generated = add_generated(job, m, reference_time(job, m));
    drop_excluded(m.view());
    WritePlan plan = plan_writes(m.view());
    // From here `files` and `bytes` count the image's files with bytes as
    // their data is placed (copied from the earlier image, joined from a
    // segment, or compressed by the data pass), of these totals; during the
    // merge they counted every version compressed (docs/import.md).
    job.prog.files = job.prog.bytes = 0;
    for (const WritePlan::Owner& o : plan.content_owner) {
      const uint64_t size = o.node->second.entry.size;
      if (o.seq == kGeneratedSeq || size == 0) continue;  // write_tree's
      job.prog.total_files++;
      job.prog.total_bytes += size;
    }
    if (reuse) lend_blocks(job, w, m.view(), plan, want);
    job.report("data");
    // The earlier image's blocks (lend_blocks) go first, then the segments.
    if (reuse) w.copy_reused_now(reuse->writer_source);
    join_compressed(job, w, m.view(), plan);
    const bool again = write_data(job, so, w, m.view(), plan);
    write_tree(job, w, m.view(), generated);
    out = {p1.entries(), again ? 2u : 1u};
    return true;
  }
  job.report("data");
  OnePass p(job, w, m);
  job.src.walk(p);
  m.finish();
  auto generated = add_generated(job, m, reference_time(job, m));
  drop_excluded(m.view());
  WritePlan plan = plan_writes(m.view());
  // Every byte written must be the final content of the path it went to: a
  // file that a later entry replaced may still own its bytes under another
  // path (a hard link made before) or none; either way, two passes. The
  // files written left the view; a file still in it with bytes to own was
  // not written (a hard link's source whose path was replaced): two passes.
  if (m.written_then_replaced()) return false;
  for (const WritePlan::Owner& o : plan.content_owner)
    if (o.seq != kGeneratedSeq && o.node->second.entry.size > 0) return false;
  write_tree(job, w, m.view(), generated);
  out = {p.entries(), 1};
  return true;
}

// `created` is set for dockerd:// only (the image's creation time).
std::unique_ptr<inspect::ImageSource> open_input(const std::string& uri, const inspect::SourceOptions& so,
                                                 std::optional<int64_t>& created) {
  constexpr std::string_view kDockerd = "dockerd://";
  if (!uri.starts_with(kDockerd)) return inspect::open_source(uri, so);
  int64_t t = 0;
  auto src = open_dockerd_export(uri.substr(kDockerd.size()), t);
  created = t;
  return src;
}

// sqsh::WriterOptions' documented defaults, so the sidecar says what was used.
nlohmann::ordered_json effective_level(const sqsh::WriterOptions& wo) {
  if (wo.level) return *wo.level;
  switch (wo.compressor) {
    case sqsh::Compressor::Zstd: return 3;
    case sqsh::Compressor::Gzip: return 9;
    case sqsh::Compressor::Xz: return 6;
    case sqsh::Compressor::Lzo: return 8;
    default: return nullptr;
  }
}

nlohmann::ordered_json make_sidecar(const Job& job, const ImportResult& r, const sqsh::WriterOptions& wo) {
  nlohmann::ordered_json j;
  j["schema"] = "trainimg.import/v1";
  j["image"] = std::filesystem::absolute(r.output).lexically_normal().string();
  j["source"] = job.opt.source;
  j["source_kind"] = job.desc.kind;
  j["image_digest"] =
      job.desc.digest.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(job.desc.digest);
  j["config_digest"] = job.desc.config_digest.empty() ? nlohmann::ordered_json()
                                                      : nlohmann::ordered_json(job.desc.config_digest);
  j["layers"] = job.desc.layers;
  j["trainimg_version"] = TRAINIMG_VERSION;
  j["compression"] = {{"algorithm", std::string(sqsh::to_string(r.info.compressor))},
                      {"requested", std::string(sqsh::to_string(wo.compressor))},
                      {"level", effective_level(wo)},
                      {"block_size", r.info.block_size},
                      {"data_compressed", r.info.data_compressed},
                      {"enroot_defaults", job.opt.enroot_defaults}};
  j["sizes"] = {{"image_bytes", r.image_bytes},
                {"file_bytes", r.input_bytes},
                {"files", r.files},
                {"inodes", r.info.inode_count},
                {"source_entries", r.entries}};
  j["mtime"] = r.info.mtime;
  j["source_date_epoch"] = job.opt.source_date_epoch ? nlohmann::ordered_json(*job.opt.source_date_epoch)
                                                     : nlohmann::ordered_json();
  j["reference_mtime"] = {{"seconds", job.reference}, {"from", job.reference_from}};
  j["xattrs_kept"] = job.opt.keep_xattrs;
  j["passes"] = r.passes;
  return j;
}

}  // namespace

// The published image inspected as `trainimg inspect sqsh:OUT` would (no
// expectations): the verdict recorded in the sidecar. A failure to inspect
// is recorded, not thrown: the image itself is complete and published.
nlohmann::ordered_json inspect_verdict(const std::string& image, std::optional<Report>& kept,
                                       const std::string& digest, int fd) {
  nlohmann::ordered_json j;
  try {
    Report rep = fd >= 0 ? inspect::inspect_sqsh(fd, image, inspect::ImageExpectations{})
                         : inspect::inspect_image("sqsh:" + image, inspect::ImageExpectations{});
    if (!digest.empty() && rep.facts["image"]["digest"].is_null()) rep.facts["image"]["digest"] = digest;
    size_t counts[3] = {0, 0, 0};
    nlohmann::ordered_json findings = nlohmann::ordered_json::array();
    for (const auto& d : rep.findings) {
      counts[static_cast<int>(d.severity)]++;
      findings.push_back({{"rule", d.rule_id},
                          {"severity", std::string(to_string(d.severity))},
                          {"message", d.message},
                          {"path", d.path}});
    }
    j["schema"] = "trainimg.inspect/v1";
    j["verdict"] = counts[2] ? "error" : counts[1] ? "warning" : "clean";
    j["errors"] = counts[2];
    j["warnings"] = counts[1];
    j["infos"] = counts[0];
    j["findings"] = std::move(findings);
    j["facts"] = rep.facts;  // for the job-start gate and whoever reads the sidecar
    kept = std::move(rep);
  } catch (const std::exception& e) {
    j["verdict"] = "not-inspected";
    j["error"] = e.what();
  }
  return j;
}

std::optional<int64_t> source_date_epoch_from_env() {
  const char* v = std::getenv("SOURCE_DATE_EPOCH");
  if (!v || !*v) return std::nullopt;
  std::string s(v);
  if (s.size() > 12 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw Error("SOURCE_DATE_EPOCH", "'" + s + "' is not a number of seconds since 1970",
                "set it to e.g. $(git log -1 --format=%ct), or unset it");
  return std::stoll(s);
}

namespace {

// The --reuse candidate sharing the most lowest layers with this image; a
// candidate that cannot serve is named in `notes`, with why.
std::unique_ptr<Reuse> choose_reuse(const Job& job, const ImportOptions& opt,
                                    std::vector<std::string>& notes) {
  const sqsh::WriterOptions wo = writer_options(opt, 0);
  const sqsh::Compressor want_cmp =
      wo.compressor == sqsh::Compressor::None ? sqsh::Compressor::Gzip : wo.compressor;
  const bool want_compressed = wo.compress_data && wo.compressor != sqsh::Compressor::None;
  std::unique_ptr<Reuse> best;
  for (const std::string& path : opt.reuse) {
    auto c = std::make_unique<Reuse>();
    c->path = path;
    try {
      c->image = std::make_unique<sqsh::Image>(path);
      const sqsh::ImageInfo& info = c->image->info();
      if (info.compressor != want_cmp || info.block_size != wo.block_size ||
          info.data_compressed != want_compressed) {
        notes.push_back("not reusing " + path + ": it is " + std::string(sqsh::to_string(info.compressor)) +
                        ", " + std::to_string(info.block_size / 1024) + " KiB blocks" +
                        (info.data_compressed ? "" : ", data stored raw") + "; this import writes " +
                        std::string(sqsh::to_string(want_cmp)) + ", " + std::to_string(wo.block_size / 1024) +
                        " KiB blocks" + (want_compressed ? "" : ", data stored raw"));
        continue;
      }
      c->index = read_reuse_index(path, c->image->fd(), info);
    } catch (const Error& e) {
      notes.push_back("not reusing " + path + ": " + e.what());
      continue;
    }
    const auto& mine = job.desc.layers;
    while (c->shared < mine.size() && c->shared < c->index.layers.size() &&
           c->index.layers[c->shared].id == mine[c->shared])
      c->shared++;
    if (c->shared == 0) {
      notes.push_back("not reusing " + path + ": its lowest layer is not this image's");
      continue;
    }
    c->shared_entries = c->index.layers[c->shared - 1].first_seq + c->index.layers[c->shared - 1].count;
    if (!best || c->shared > best->shared) best = std::move(c);
  }
  return best;
}

}  // namespace

ImportResult import_image(const ImportOptions& opt, const ImportProgressFn& progress) {
  if (opt.via_enroot) return import_via_enroot(opt, progress);
  SignalGuard guard;
  std::optional<int64_t> created;
  auto src = open_input(opt.source, opt.sources, created);
  // SOURCE_DATE_EPOCH wins over the image's `created`.
  std::optional<int64_t> clamp = opt.source_date_epoch ? opt.source_date_epoch : created;
  const char* from = opt.source_date_epoch ? "source_date_epoch" : created ? "image_created" : "newest_mtime";
  Job job{.opt = opt,
          .progress = progress,
          .src = *src,
          .desc = src->describe(),
          .daemon_export = created.has_value(),
          .fix = FixupOptions{opt.keep_xattrs},
          .clamp = clamp,
          .reference_from = from};
  if (job.desc.reference.empty()) job.desc.reference = opt.source;
  // --jobs N caps the threads at work at N; without it every thread may run
  // (the CPUs the process may use bound them: an affinity mask, a quota).
  std::optional<CpuSlots> cpu_slots;
  if (opt.jobs) job.cpu_slots = &cpu_slots.emplace(opt.jobs);
  job.threads = import_jobs(opt);
  job.report("resolve");  // the source is open: its manifest (and digest) resolved
  if (progress) src->on_transfer([&job](const inspect::TransferProgress& t) { job.report_download(t); });
  // Before the compressors and the read-ahead start (they inherit its nice
  // value); the read-ahead paces the CPUs of every thread while the export
  // streams; the writer and the walk end inside the try below.
  std::optional<DaemonYield> yield;
  if (job.daemon_export) yield.emplace();
  const bool layered = job.desc.layers.size() > 1;
  // Block reuse and the index: for layers named by their content only.
  const bool content_addressed = !job.daemon_export && !job.desc.layers.empty() &&
                                 std::all_of(job.desc.layers.begin(), job.desc.layers.end(),
                                             [](const std::string& id) { return is_sha256_digest(id); });
  const bool want_index = opt.write_index && content_addressed;
  std::optional<ReuseIndexWriter> index;  // streamed beside the image as the walk goes
  bool index_written = false;
  std::vector<std::string> notes;
  std::unique_ptr<Reuse> reuse;
  if (!opt.reuse.empty()) {
    if (!layered || !content_addressed)
      notes.push_back("no block reuse: " + opt.source +
                      (layered ? " has layers not named by their digest" : " has a single layer"));
    else
      reuse = choose_reuse(job, opt, notes);
  }
  job.reuse = reuse.get();
  // The super block mtime must not depend on the clock: SOURCE_DATE_EPOCH or 0.
  ImportResult r;
  r.output = opt.output;
  nlohmann::ordered_json inspected;  // the verdict, for the sidecar
  std::string content_digest;        // --content-digest's
  try {
    PartialOutput out(opt.output, opt.force);
    std::future<std::string> content;  // destroyed (joined) before `out`
    if (want_index) job.index = &index.emplace(reuse_index_path(opt.output));
    sqsh::WriterOptions wo;
    Written written;
    unsigned abandoned = 0;
    for (bool two_pass = layered;; two_pass = true) {
      if (::ftruncate(out.fd(), 0) != 0) throw_errno(out.target(), "truncate failed");
      job.prog = {};
      // A first walk for the mtime would cost a pass; the newest mtime is
      // only known after the merge, so a provisional writer gets SDE or 0
      // and every entry carries its own mtime.
      wo = writer_options(opt, clamp_time(opt.source_date_epoch.value_or(0)));
      wo.cpu_slots = job.cpu_slots;
      wo.num_workers = job.threads;
      if (index) {
        index->clear();
        wo.on_extent = [&index](uint64_t seq, sqsh::FileExtent x) { index->extent(seq, x); };
      }
      sqsh::Writer w(out.fd(), opt.output, wo);
      if (reuse) {
        reuse->writer_source = w.add_reuse_source(reuse->image->fd(), reuse->path, reuse->image->info(),
                                                  reuse->image->fragments());
      }
      if (!write_image(job, w, two_pass, written)) {
        ++abandoned;  // that walk counts too
        continue;
      }
      job.report("finish");
      r.image_bytes = w.finish();
      // The content digest reads the file just written (still in the page
      // cache) on a thread of its own, while it is verified, inspected and
      // made durable (nothing writes it after finish()), through a
      // descriptor of its own: the commit closes the partial's.
      if (opt.content_digest) {
        UniqueFd own(::fcntl(out.fd(), F_DUPFD_CLOEXEC, 0));
        if (!own) throw_errno(out.target(), "duplicating the output's descriptor");
        content = std::async(std::launch::async,
                             [fd = std::move(own), &opt] { return sha256_fd(fd.get(), opt.output); });
      }
      auto st = w.stats();
      r.input_bytes = st.input_bytes;
      r.files = st.files;
      if (reuse) {
        auto rs = w.reuse_stats(reuse->writer_source);
        reuse->summary["copied_bytes"] = rs.copied_bytes;
        reuse->summary["padding_bytes"] = rs.dead_bytes;
        reuse->summary["unused_bytes"] = rs.unused_bytes;
      }
      break;
    }
    yield.reset();  // the compressors and the read-ahead have ended
    job.report("verify");
    // The image is read back before it is published, by two threads at once
    // (each a walk of every inode and listing: a tenth of a reused import at
    // 300,000 files): the verification, and the inspection whose verdict
    // the sidecar records (a failed inspection is recorded, not thrown).
    std::future<nlohmann::ordered_json> verdict;  // destroyed (joined) before `out`
    if (opt.inspect) {
      verdict = std::async(std::launch::async,
                           [&] { return inspect_verdict(opt.output, r.report, job.desc.digest, out.fd()); });
    }
    r.info = out.verify();
    // An index that cannot be written costs later imports their reuse, not
    // this one its image.
    if (index) {
      try {
        index->bind(out.fd(), r.info, opt.output);
      } catch (const Error& e) {
        notes.push_back(std::string("no reuse index written: ") + e.what());
        index.reset();
        job.index = nullptr;
      }
    }
    if (verdict.valid()) {
      job.report("inspect");
      inspected = verdict.get();
    }
    out.commit();
    if (content.valid()) content_digest = content.get();
    const std::string index_file = reuse_index_path(opt.output);
    if (index) {
      try {
        index->publish();
        index_written = true;
      } catch (const Error& e) {
        notes.push_back(std::string("no reuse index written: ") + e.what());
      }
    } else if (::unlink(index_file.c_str()) != 0 && errno != ENOENT) {
      notes.push_back("a stale reuse index could not be removed: " + index_file + ": " +
                      std::strerror(errno));
    }
    r.entries = written.entries;
    r.passes = written.passes + abandoned;
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& e) {
    if (int sig = pending_signal()) throw Interrupted(sig, opt.source);
    throw explain_io_error(e, opt.output);
  }
  r.notes = notes;
  r.sidecar = make_sidecar(job, r, writer_options(opt, 0));
  if (reuse || !opt.reuse.empty()) {
    nlohmann::ordered_json j = reuse ? reuse->summary : nlohmann::ordered_json::object();
    if (!reuse) j["from"] = nullptr;
    j["notes"] = notes;
    r.sidecar["reuse"] = std::move(j);
  }
  r.sidecar["reuse_index"] = index_written ? nlohmann::ordered_json(reuse_index_path(opt.output)) : nullptr;
  if (opt.inspect) r.sidecar["inspect"] = std::move(inspected);
  if (opt.content_digest) r.sidecar["sqsh_sha256"] = content_digest;
  write_sidecar(opt.output, r.sidecar);
  job.report("done");
  return r;
}

}  // namespace trainimg::builder
