// SPDX-License-Identifier: GPL-3.0-or-later
// The data pass of a layered import, one layer per thread (segments.h).
#include "builder/import/segments.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <malloc.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "builder/import/entry_codec.h"
#include "builder/import/merge.h"
#include "builder/publish/publish.h"
#include "common/cpu_slots.h"
#include "common/cpus.h"
#include "common/error.h"
#include "common/fd.h"

namespace trainimg::builder {

namespace {

constexpr size_t kChunk = 1u << 20;

// Thrown in a worker when another layer failed: its own error is not the one to report.
struct Cancelled {};

// A segment being written: its unnamed file beside the output and the
// blocks-only writer on it (data and fragment blocks, no tree, no tables),
// its files tagged 0, 1, … (named "/0", "/1", … in messages) in the order
// they come. Neither copied nor moved: its writer calls back into it.
struct SegmentWriter {
  SegmentWriter(size_t layer, const SegmentOptions& o, SegmentThreads t)
      : name(o.output + " (segment of layer " + std::to_string(layer) + ")") {
    seg.file = std::make_unique<AtomicFile>(o.output + ".segment", /*replace=*/true, 0600);
    sqsh::WriterOptions wo = o.writer;
    wo.num_workers = t.workers;
    wo.on_extent = [this](uint64_t k, sqsh::FileExtent x) { sink(k, std::move(x)); };
    wo.blocks_only = true;  // no tree, no tables: only its blocks are ever read
    wo.lean = t.lean;       // up to --jobs of them at once: memory (docs/import.md)
    // Where the output will share the segment's blocks, they must reach the
    // disk anyway: start that now, while the CPUs compress (a writer with a
    // write-behind thread, not lean, always does).
    wo.write_back = o.share_blocks;
    wo.exportable = false;
    wo.keep_xattrs = false;  // the image's nodes carry them, not the segment's
    wo.clamp_mtimes = false;
    wo.mtime = 0;
    w.emplace(seg.file->fd(), name, wo);
  }
  static sqsh::Node file_node(size_t k, uint64_t size) {
    sqsh::Node n;
    n.path = "/" + std::to_string(k);
    n.tag = k;
    n.type = sqsh::NodeType::File;
    n.mode = 0644;
    n.size = size;
    return n;
  }
  // Finishes the segment; `extent` gets where files 0 … n-1 are.
  Segment finish(size_t n, const std::function<void(size_t, sqsh::FileExtent)>& extent) {
    size_t seen = 0;
    sink = [&](uint64_t k, sqsh::FileExtent x) {
      if (k >= n) throw Error(name, "an extent for file " + std::to_string(k) + " of " + std::to_string(n));
      extent(static_cast<size_t>(k), std::move(x));
      ++seen;
    };
    w->finish();  // gives this thread's CPU slot back while its compressors end
    sink = nullptr;
    if (seen != n) throw Error(name, std::to_string(n - seen) + " files without a recorded extent");
    seg.info = w->data_info();
    seg.fragments = w->fragments();
    w.reset();  // its nodes, before the next layer's
    return std::move(seg);
  }
  std::string name;
  Segment seg;
  std::function<void(uint64_t, sqsh::FileExtent)> sink;  // during finish()
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;
  std::optional<sqsh::Writer> w;
};

// Compresses the files a layer's LayerFiles lists into a segment; a
// LayerVisitor for that layer's walk (the data pass).
class SegmentBuilder : public inspect::LayerVisitor {
 public:
  SegmentBuilder(LayerFiles& l, const SegmentOptions& o, SegmentThreads t,
                 const std::function<void(uint64_t)>& file_done, const std::atomic<bool>& stop)
      : l_(l), o_(o), file_done_(file_done), stop_(stop), sw_(l.layer, o, t) {}

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
    check();
    uint64_t got =
        copy_file_content(*sw_.w, SegmentWriter::file_node(next_, f.node.size), f.node.path, r, o_.reference);
    ++next_;
    file_done_(got);
  }

  // Every file delivered: finish the segment and read back where it put them.
  Segment finish() {
    if (next_ != l_.files.size())
      throw Error(o_.reference, l_.files[next_].node.path + ": the source never delivered this file's data");
    return sw_.finish(l_.files.size(),
                      [&](size_t k, sqsh::FileExtent x) { l_.files[k].extent = std::move(x); });
  }

 private:
  void check() {
    if (stop_.load(std::memory_order_relaxed)) throw Cancelled{};
    check_interrupted(o_.reference);
  }

  LayerFiles& l_;
  const SegmentOptions& o_;
  const std::function<void(uint64_t)>& file_done_;
  const std::atomic<bool>& stop_;
  SegmentWriter sw_;
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
    b_.emplace(*current_, o_, segment_threads(o_.jobs, 1), file_done_, never_);
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
    name_this_thread("ti-layer");
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

struct LayerCompressor::Impl {
  Impl(size_t l, const SegmentOptions& o, SegmentThreads t, const std::function<void(uint64_t)>& done,
       const std::atomic<bool>* s)
      : layer(l), opt(o), file_done(done), stop(s), sw(l, o, t) {}
  void check() {
    if (stop && stop->load(std::memory_order_relaxed)) throw Cancelled{};
    check_interrupted(opt.reference);
  }
  size_t layer;
  const SegmentOptions& opt;
  const std::function<void(uint64_t)>& file_done;
  const std::atomic<bool>* stop;
  SegmentWriter sw;
  uint64_t next = 0;  // index of the layer's next entry
  std::optional<uint64_t> pending;
  std::vector<uint64_t> at;
};

LayerCompressor::LayerCompressor(size_t layer, const SegmentOptions& o, SegmentThreads t,
                                 const std::function<void(uint64_t)>& file_done,
                                 const std::atomic<bool>* stop)
    : impl_(std::make_unique<Impl>(layer, o, t, file_done, stop)) {}
LayerCompressor::~LayerCompressor() = default;

bool LayerCompressor::entry(const inspect::Entry& e) {
  Impl& m = *impl_;
  const uint64_t k = m.next++;
  if ((k & 1023) == 0) m.check();
  m.pending.reset();
  if (e.type != inspect::EntryType::File || e.size == 0) return false;
  m.pending = k;
  return true;
}

void LayerCompressor::content(const inspect::Entry& e, inspect::ContentReader& r) {
  Impl& m = *impl_;
  if (!m.pending) return;
  const uint64_t k = *std::exchange(m.pending, std::nullopt);
  m.check();
  uint64_t got =
      copy_file_content(*m.sw.w, SegmentWriter::file_node(m.at.size(), e.size), e.path, r, m.opt.reference);
  m.at.push_back(k);
  m.file_done(got);
}

CompressedLayer LayerCompressor::finish() {
  Impl& m = *impl_;
  CompressedLayer c;
  c.layer = m.layer;
  c.extents.resize(m.at.size());
  c.seg = m.sw.finish(m.at.size(), [&](size_t k, sqsh::FileExtent x) { c.extents[k] = std::move(x); });
  c.at = std::move(m.at);
  return c;
}

sqsh::FileExtent* CompressedLayer::find(uint64_t k) {
  auto it = std::lower_bound(at.begin(), at.end(), k);
  return it != at.end() && *it == k ? &extents[static_cast<size_t>(it - at.begin())] : nullptr;
}

SegmentThreads segment_threads(unsigned jobs, size_t threads, size_t later) {
  // Inline compression (lean writer, one worker) was 12% slower at --jobs 16
  // on the 16-core machine (docs/import.md).
  return {.workers =
              static_cast<unsigned>(jobs < 2 ? 1 : std::max<size_t>(2, jobs / std::max<size_t>(1, threads))),
          .lean = threads > 4 && later >= kLastLayersNotLean};
}

uint64_t copy_file_content(sqsh::Writer& w, const sqsh::Node& node, const std::string& path,
                           inspect::ContentReader& r, const std::string& reference) {
  static thread_local std::vector<char> buf(kChunk);
  // Reading (inflating) holds this thread's CPU slot, if it has one; the
  // writer gives it back wherever it waits for its compressors, which need
  // slots of their own (cpu_slots.h, sqsh's DataFeeder).
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
  // Each segment gets compressor threads of its own: the biggest layer bounds the pass.
  std::vector<size_t> later(order.size());  // layers to start after each
  for (size_t k = 0; k < order.size(); ++k) later[order[k]] = order.size() - 1 - k;
  ordered_parallel<Segment>(
      order, threads, layers.size(),
      [&](size_t i, const std::atomic<bool>& stop) {
        CpuSlot busy(opt.writer.cpu_slots);  // reading the layer
        SegmentBuilder b(layers[i], opt, segment_threads(opt.jobs, threads, later[i]), file_done, stop);
        src.walk_layer(layers[i].layer, b);
        Segment seg = b.finish();
        malloc_trim(0);  // the segment writer's tree, freed in this thread's arena
        return seg;
      },
      [&](size_t i, Segment& seg) { join(layers[i], seg); }, meanwhile);
}

void walk_layers_in_parallel(inspect::ImageSource& src, const std::vector<size_t>& layers, unsigned jobs,
                             const std::vector<std::string>& ids, inspect::LayerVisitor& v,
                             const SegmentOptions* compress, const std::function<void(uint64_t)>& file_done,
                             const std::function<void(CompressedLayer&)>& compressed,
                             const std::function<void()>& before) {
  // A layer's entries, held until the merge takes them in layer order.
  using codec::EntryLog;
  struct Gathered {
    EntryLog entries;
    std::optional<CompressedLayer> layer;
  };
  class Gather : public inspect::LayerVisitor {
   public:
    Gather(EntryLog& out, const std::atomic<bool>& stop, LayerCompressor* c)
        : out_(out), stop_(stop), c_(c) {}
    bool entry(const inspect::Entry& e) override {
      if ((out_.size() & 1023) == 0 && stop_.load(std::memory_order_relaxed)) throw Cancelled{};
      out_.push(e);
      return c_ && c_->entry(e);
    }
    void content(const inspect::Entry& e, inspect::ContentReader& r) override {
      if (c_) c_->content(e, r);
    }

   private:
    EntryLog& out_;
    const std::atomic<bool>& stop_;
    LayerCompressor* c_;
  };
  std::vector<size_t> order(layers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const size_t threads = std::clamp<size_t>(jobs, 1, std::max<size_t>(1, layers.size()));
  ordered_parallel<Gathered>(
      order, threads, 2 * threads,  // entries of at most 2 x threads layers held at once
      [&](size_t k, const std::atomic<bool>& stop) {
        CpuSlot busy(compress ? compress->writer.cpu_slots : nullptr);  // reading the layer
        Gathered g;
        std::optional<LayerCompressor> c;
        if (compress)  // k: the position in start order
          c.emplace(layers[k], *compress, segment_threads(compress->jobs, threads, order.size() - 1 - k),
                    file_done, &stop);
        Gather gather(g.entries, stop, c ? &*c : nullptr);
        src.walk_layer(layers[k], gather);
        if (c) {
          g.layer = c->finish();
          c.reset();
          malloc_trim(0);  // the segment writer's tree, freed in this thread's arena
        }
        return g;
      },
      [&](size_t k, Gathered& g) {
        const size_t i = layers[k];
        v.begin_layer(ids[i], i);
        inspect::Entry e;  // one, refilled: no layer id copied per entry
        e.layer = ids[i];
        g.entries.drain(e, [&v](const inspect::Entry& x) { v.entry(x); });
        v.end_layer(ids[i], i);
        if (g.layer && compressed) compressed(*g.layer);
        g.layer.reset();
      },
      before);
}

bool shares_blocks(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  UniqueFd a(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  UniqueFd b(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!a || !b) return false;
  static const char block[4096] = {};
  if (::pwrite(a.get(), block, sizeof block, 0) != static_cast<ssize_t>(sizeof block)) return false;
  file_clone_range r{};
  r.src_fd = a.get();
  r.src_length = sizeof block;
  return ::ioctl(b.get(), FICLONERANGE, &r) == 0;
}

}  // namespace trainimg::builder
