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
#include <utility>

#include "builder/publish/publish.h"
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
    wo.lean = true;  // up to --jobs of them at once: memory (docs/import.md)
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

// Runs produce(i, stop) for every i of `order` (a permutation of 0..n-1) on
// `threads` threads, and consume(i, result) on the calling thread for i = 0,
// 1, … as each is ready; no item more than `window` past the next to consume
// is started. The first exception of any produce() stops the others (they
// see `stop`; Cancelled ends them quietly) and is rethrown here, as is one of
// consume(), once every thread has ended. `meanwhile` (if set) runs on the
// calling thread once the threads have started, before the first consume().
template <class T, class Produce, class Consume>
void ordered_parallel(const std::vector<size_t>& order, size_t threads, size_t window, Produce produce,
                      Consume consume, const std::function<void()>& meanwhile = {}) {
  struct Slot {
    std::optional<T> value;
    std::exception_ptr error;
    bool done = false;
  };
  const size_t n = order.size();
  std::vector<Slot> slots(n);
  std::mutex mu;
  std::condition_variable cv;
  size_t next = 0;      // the next of `order` to start (under mu)
  size_t consumed = 0;  // items handed to consume() (under mu)
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mu);
        if (next == n || stop) return;
        i = order[next++];
        cv.wait(lock, [&] { return i < consumed + window || stop; });
        if (stop) return;
      }
      Slot s;
      try {
        s.value.emplace(produce(i, stop));
      } catch (const Cancelled&) {
      } catch (...) {
        s.error = std::current_exception();
        stop = true;
      }
      std::lock_guard<std::mutex> lock(mu);
      s.done = true;
      slots[i] = std::move(s);
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  auto end_all = [&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
      cv.notify_all();
    }
    for (auto& t : pool) t.join();
    pool.clear();
  };
  struct Joiner {  // no thread outlives this call, whatever it throws
    decltype(end_all)& f;
    ~Joiner() { f(); }
  } joiner{end_all};
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  if (meanwhile) meanwhile();
  for (size_t i = 0; i < n; ++i) {
    Slot s;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return slots[i].done || stop; });
      if (!slots[i].done) break;  // another item failed: its error is thrown below
      s = std::move(slots[i]);
    }
    if (s.error) std::rethrow_exception(s.error);
    if (!s.value) break;
    consume(i, *s.value);
    std::lock_guard<std::mutex> lock(mu);
    ++consumed;
    cv.notify_all();
  }
  end_all();
  for (Slot& s : slots)
    if (s.error) std::rethrow_exception(s.error);
  if (consumed != n) throw Error("", "a parallel pass stopped early without an error");  // not reached
}

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

std::vector<size_t> start_order(const std::vector<LayerFiles>& layers) {
  std::vector<uint64_t> work(layers.size(), 0);
  for (size_t i = 0; i < layers.size(); ++i)
    for (const SegmentFile& f : layers[i].files) work[i] += f.node.size;
  std::vector<size_t> order(layers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return work[a] != work[b] ? work[a] > work[b] : layers[a].blob_bytes > layers[b].blob_bytes;
  });
  return order;
}

void write_segments(inspect::ImageSource& src, std::vector<LayerFiles>& layers, const SegmentOptions& opt,
                    const std::function<void(uint64_t)>& file_done,
                    const std::function<void(LayerFiles&, Segment&)>& join,
                    const std::function<void()>& meanwhile) {
  if (layers.empty()) {
    if (meanwhile) meanwhile();
    return;
  }
  const bool parallel = std::all_of(layers.begin(), layers.end(),
                                    [&](const LayerFiles& l) { return src.can_walk_layer(l.layer); });
  if (!parallel) {
    // The walk needs this thread: `meanwhile` runs when the first segment is
    // done (it writes ahead of every segment all the same), or after.
    bool ran = !meanwhile;
    const std::function<void(LayerFiles&, Segment&)> join_after = [&](LayerFiles& l, Segment& seg) {
      if (!std::exchange(ran, true)) meanwhile();
      join(l, seg);
    };
    SerialSegments v(layers, opt, file_done, join_after);
    src.walk(v);
    if (!std::exchange(ran, true)) meanwhile();
    if (v.joined() != layers.size())
      throw Error(opt.reference, "the source did not deliver every layer it has files of");
    return;
  }
  const std::vector<size_t> order = start_order(layers);
  const size_t threads = std::clamp<size_t>(opt.jobs, 1, layers.size());
  // Each segment gets compressor threads of its own, at least two (unless
  // --jobs 1), so that a layer's reading (inflate, tar) runs beside its
  // compression: the biggest layer bounds the pass. Inline compression
  // (lean writer, one worker) was 12% slower at --jobs 16 on the 16-core
  // machine (docs/import.md).
  const size_t per_layer = opt.jobs / threads;
  const unsigned workers = static_cast<unsigned>(opt.jobs < 2 ? 1 : std::max<size_t>(2, per_layer));
  ordered_parallel<Segment>(
      order, threads, layers.size(),
      [&](size_t i, const std::atomic<bool>& stop) {
        SegmentBuilder b(layers[i], opt, workers, file_done, stop);
        src.walk_layer(layers[i].layer, b);
        Segment seg = b.finish();
        malloc_trim(0);  // the segment writer's tree, freed in this thread's arena
        return seg;
      },
      [&](size_t i, Segment& seg) { join(layers[i], seg); }, meanwhile);
}

void walk_layers_in_parallel(inspect::ImageSource& src, const std::vector<size_t>& layers, unsigned jobs,
                             const std::vector<std::string>& ids, inspect::LayerVisitor& v) {
  struct Gathered {
    std::vector<inspect::Entry> entries;
  };
  class Gather : public inspect::LayerVisitor {
   public:
    Gather(std::vector<inspect::Entry>& out, const std::atomic<bool>& stop) : out_(out), stop_(stop) {}
    bool entry(const inspect::Entry& e) override {
      if ((out_.size() & 1023) == 0 && stop_.load(std::memory_order_relaxed)) throw Cancelled{};
      out_.push_back(e);
      return false;
    }

   private:
    std::vector<inspect::Entry>& out_;
    const std::atomic<bool>& stop_;
  };
  std::vector<size_t> order(layers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const size_t threads = std::clamp<size_t>(jobs, 1, std::max<size_t>(1, layers.size()));
  ordered_parallel<Gathered>(
      order, threads, 2 * threads,  // entries of at most 2 x threads layers held at once
      [&](size_t k, const std::atomic<bool>& stop) {
        Gathered g;
        Gather gather(g.entries, stop);
        src.walk_layer(layers[k], gather);
        return g;
      },
      [&](size_t k, Gathered& g) {
        const size_t i = layers[k];
        v.begin_layer(ids[i], i);
        for (const inspect::Entry& e : g.entries) v.entry(e);
        v.end_layer(ids[i], i);
        std::vector<inspect::Entry>().swap(g.entries);
      });
}

}  // namespace trainimg::builder
