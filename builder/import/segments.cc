// SPDX-License-Identifier: GPL-3.0-or-later
// The data pass of a layered import, one layer per thread (segments.h).
#include "builder/import/segments.h"

#include <malloc.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "builder/publish.h"
#include "common/error.h"

namespace trainimg::builder {

namespace {

constexpr size_t kChunk = 1u << 20;

// Thrown in a worker when another layer failed: its own error is not the one to report.
struct Cancelled {};

// Compresses one layer's files into a segment; a LayerVisitor for that layer's walk.
class SegmentBuilder : public inspect::LayerVisitor {
 public:
  SegmentBuilder(LayerFiles& l, const SegmentOptions& o, unsigned workers,
                 const std::function<void(uint64_t)>& file_done, const std::atomic<bool>& stop)
      : l_(l), o_(o), file_done_(file_done), stop_(stop) {
    seg_.file = std::make_unique<AtomicFile>(o.output + ".segment", /*replace=*/true, 0600);
    sqsh::WriterOptions wo = o.writer;
    wo.num_workers = workers;
    wo.record_extents = true;
    wo.exportable = false;
    wo.keep_xattrs = false;  // the image's nodes carry them, not the segment's
    wo.clamp_mtimes = false;
    wo.mtime = 0;
    w_.emplace(seg_.file->fd(), name(), wo);
  }

  void begin_layer(const std::string& id, size_t index) override {
    (void)id;
    (void)index;
    seq_ = l_.first_seq;
  }
  bool entry(const inspect::Entry& e) override {
    const uint64_t s = seq_++;
    if ((s & 1023) == 0) check();
    if (next_ == l_.files.size() || l_.files[next_].seq != s) return false;
    const SegmentFile& f = l_.files[next_];
    if (e.type != inspect::EntryType::File || (e.path != f.expect && e.path != f.node.path))
      throw Error(o_.reference, "the source changed between two walks (at " + e.path + ")",
                  "do not modify the image while it is imported");
    pending_ = true;
    return true;
  }
  void content(const inspect::Entry& e, inspect::ContentReader& r) override {
    (void)e;
    if (!pending_) return;
    pending_ = false;
    SegmentFile& f = l_.files[next_];
    sqsh::Node n;
    n.path = "/" + std::to_string(next_);
    n.type = sqsh::NodeType::File;
    n.mode = 0644;
    n.size = f.node.size;
    check();
    uint64_t got = copy_file_content(*w_, n, f.node.path, r, o_.reference);
    ++next_;
    file_done_(got);
  }

  // Every file delivered: finish the segment and read back where it put them.
  Segment finish() {
    if (next_ != l_.files.size())
      throw Error(o_.reference, l_.files[next_].node.path + ": the source never delivered this file's data");
    w_->finish();
    for (size_t k = 0; k < l_.files.size(); ++k) {
      auto x = w_->extent("/" + std::to_string(k));
      if (!x) throw Error(name(), "no extent recorded for file " + std::to_string(k));
      l_.files[k].extent = std::move(*x);
    }
    w_.reset();  // its tree, before the next layer's
    sqsh::Image img(seg_.file->fd(), name());
    seg_.info = img.info();
    seg_.fragments = img.fragments();
    return std::move(seg_);
  }

 private:
  std::string name() const { return o_.output + " (segment of layer " + std::to_string(l_.layer) + ")"; }
  void check() {
    if (stop_.load(std::memory_order_relaxed)) throw Cancelled{};
    check_interrupted(o_.reference);
  }

  LayerFiles& l_;
  const SegmentOptions& o_;
  const std::function<void(uint64_t)>& file_done_;
  const std::atomic<bool>& stop_;
  Segment seg_;
  std::optional<sqsh::Writer> w_;
  uint64_t seq_ = 0;
  size_t next_ = 0;
  bool pending_ = false;
};

// A source that cannot read each layer alone: one walk, in order, each
// layer into its segment, joined as soon as it is written.
class SerialSegments : public inspect::LayerVisitor {
 public:
  SerialSegments(std::vector<LayerFiles>& layers, const SegmentOptions& o,
                 const std::function<void(uint64_t)>& file_done,
                 const std::function<void(LayerFiles&, Segment&)>& join)
      : layers_(layers), o_(o), file_done_(file_done), join_(join) {}
  bool want_layer(const std::string& id, size_t index) override {
    (void)id;
    return find(index) != nullptr;
  }
  void begin_layer(const std::string& id, size_t index) override {
    current_ = find(index);
    if (!current_) return;
    b_.emplace(*current_, o_, o_.jobs, file_done_, never_);
    b_->begin_layer(id, index);
  }
  bool entry(const inspect::Entry& e) override { return b_ && b_->entry(e); }
  void content(const inspect::Entry& e, inspect::ContentReader& r) override {
    if (b_) b_->content(e, r);
  }
  void end_layer(const std::string& id, size_t index) override {
    (void)id;
    (void)index;
    if (!b_) return;
    Segment s = b_->finish();
    b_.reset();
    join_(*current_, s);
    ++joined_;
  }
  size_t joined() const { return joined_; }

 private:
  LayerFiles* find(size_t index) {
    for (LayerFiles& l : layers_)
      if (l.layer == index) return &l;
    return nullptr;
  }
  std::vector<LayerFiles>& layers_;
  const SegmentOptions& o_;
  const std::function<void(uint64_t)>& file_done_;
  const std::function<void(LayerFiles&, Segment&)>& join_;
  const std::atomic<bool> never_{false};
  LayerFiles* current_ = nullptr;
  std::optional<SegmentBuilder> b_;
  size_t joined_ = 0;
};

}  // namespace

uint64_t copy_file_content(sqsh::Writer& w, const sqsh::Node& node, const std::string& path,
                           inspect::ContentReader& r, const std::string& reference) {
  static thread_local std::vector<char> buf(kChunk);
  w.begin_file(node);
  uint64_t got = 0;
  for (;;) {
    check_interrupted(reference);
    std::string_view v = r.read_view(buf);
    if (v.empty()) break;
    got += v.size();
    if (got > node.size) break;
    w.write(v.data(), v.size());
  }
  if (got != node.size)
    throw Error(reference, path + ": the header says " + std::to_string(node.size) + " bytes, the data has " +
                               (got > node.size ? "more" : std::to_string(got)));
  w.end_file();
  return got;
}

void write_segments(inspect::ImageSource& src, std::vector<LayerFiles>& layers, const SegmentOptions& opt,
                    const std::function<void(uint64_t)>& file_done,
                    const std::function<void(LayerFiles&, Segment&)>& join) {
  if (layers.empty()) return;
  const bool parallel = std::all_of(layers.begin(), layers.end(),
                                    [&](const LayerFiles& l) { return src.can_walk_layer(l.layer); });
  if (!parallel) {
    SerialSegments v(layers, opt, file_done, join);
    src.walk(v);
    if (v.joined() != layers.size())
      throw Error(opt.reference, "the source did not deliver every layer it has files of");
    return;
  }
  // The biggest layers first (the last to finish bounds the pass); joined
  // in layer order all the same.
  std::vector<size_t> order(layers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return layers[a].blob_bytes > layers[b].blob_bytes; });
  const size_t threads = std::clamp<size_t>(opt.jobs, 1, layers.size());
  // A thread per layer compresses inline; with fewer layers than jobs each
  // segment gets compressor threads of its own.
  const unsigned workers = static_cast<unsigned>(std::max<size_t>(1, opt.jobs / threads));
  struct Slot {
    std::optional<Segment> seg;
    std::exception_ptr error;
    bool cancelled = false;
    bool done = false;
  };
  std::vector<Slot> slots(layers.size());
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (;;) {
      const size_t k = next.fetch_add(1);
      if (k >= order.size() || stop.load()) return;
      const size_t i = order[k];
      Slot s;
      try {
        SegmentBuilder b(layers[i], opt, workers, file_done, stop);
        src.walk_layer(layers[i].layer, b);
        s.seg = b.finish();
      } catch (const Cancelled&) {
        s.cancelled = true;
      } catch (...) {
        s.error = std::current_exception();
        stop = true;
      }
      malloc_trim(0);  // the segment writer's tree, freed on this thread's arena
      std::lock_guard<std::mutex> lock(mu);
      slots[i] = std::move(s);
      slots[i].done = true;
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  struct Joiner {  // no worker outlives this call, whatever it throws
    std::vector<std::thread>& pool;
    std::atomic<bool>& stop;
    ~Joiner() {
      stop = true;
      for (auto& t : pool) t.join();
    }
  } joiner{pool, stop};
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  size_t joined = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    Slot s;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return slots[i].done || stop.load(); });
      if (!slots[i].done) break;  // another layer failed: its error is thrown below
      s = std::move(slots[i]);
    }
    if (s.error) std::rethrow_exception(s.error);
    if (s.cancelled || !s.seg) break;
    join(layers[i], *s.seg);
    ++joined;
  }
  stop = true;
  for (auto& t : pool) t.join();
  pool.clear();
  for (Slot& s : slots)
    if (s.error) std::rethrow_exception(s.error);
  if (joined != layers.size())  // only a failed layer stops the pass early
    throw Error(opt.reference, "the data pass stopped at layer " + std::to_string(layers[joined].layer));
}

}  // namespace trainimg::builder
