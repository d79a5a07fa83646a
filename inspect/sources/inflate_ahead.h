// SPDX-License-Identifier: GPL-3.0-or-later
// A gzip layer inflated on a thread of its own, ahead of its reader.
//
// A layer's reader inflates, parses the tar and hands every file to its
// consumer (an import's segment writer, the inspection's facts); zlib's
// inflate is more than half of that thread's time, and where a few big layers
// are left at the end of an import nothing else can take it over: a gzip
// stream is inflated from its start. InflateAhead moves the inflate (and the
// reads of the compressed bytes, with their digest) to a second thread, so
// that the reader parses buffer k while buffer k + 1 is inflated.
//
//   InflateAhead ahead(in, file, member);   // peeks at in's first bytes
//   TarReader t(ahead, …);                  // plain tar when `in` is gzip
//   … walk …
//   ahead.finish();                         // stops; in.unread(n) for read-ahead
//
// Anything that is not gzip (plain tar, zstd, an empty blob) passes through
// untouched, seekable if `in` is. Errors of the stream (corrupt or truncated
// data) reach the reader in order, after the bytes before them, as one Error
// naming `file`, `member` and the compressed offset. The inflate thread takes
// a CPU slot (common/cpu_slots.h) of the slots the constructing thread holds,
// and gives it back whenever it waits; the reader gives its own back while it
// waits for a buffer.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "inspect/sources/source.h"

namespace trainimg {
class CpuSlots;
}

namespace trainimg::inspect {

class InflateAhead : public ContentReader {
 public:
  /// Reads the first bytes of `in` (on this thread); a gzip stream starts the
  /// inflate thread. `buffers` x `buffer_bytes` of inflated data at most are
  /// held ahead of the reader.
  InflateAhead(ContentReader& in, std::string file, std::string member, size_t buffers = 4,
               size_t buffer_bytes = 512 * 1024);
  ~InflateAhead() override;  // stops and joins the thread (no error thrown)
  InflateAhead(const InflateAhead&) = delete;
  InflateAhead& operator=(const InflateAhead&) = delete;

  /// True when `in` is gzip and is being inflated here.
  bool inflating() const { return inflating_; }
  size_t read(char* buf, size_t n) override;
  std::string_view read_view(std::span<char> scratch) override;
  uint64_t skip(uint64_t n) override;
  bool seekable() const override { return !inflating_ && in_.seekable(); }
  /// The reader is done: stops the thread and tells `in` (ContentReader::
  /// unread) how many compressed bytes were read ahead of what the reader
  /// took (and after the gzip stream, if it ended), as if never read. Without
  /// it (an error unwinding) the destructor only stops the thread.
  void finish();

 private:
  struct Ready {
    size_t buffer;     // index into buffers_
    size_t bytes;      // inflated bytes in it
    uint64_t in_used;  // compressed bytes consumed from `in` once it was filled
  };
  void run();
  void inflate_all();
  void stop_thread();
  bool next_buffer();  // the reader's next buffer (the current one back); false at the end

  ContentReader& in_;
  const std::string file_, member_;
  bool inflating_ = false;
  std::string head_;  // the bytes peeked at (passed through when not gzip)
  size_t head_at_ = 0;
  CpuSlots* slots_ = nullptr;

  std::vector<std::vector<char>> buffers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<size_t> free_;  // under mu_
  std::deque<Ready> ready_;   // under mu_
  bool done_ = false;         // under mu_: no more buffers will come
  bool stop_ = false;         // under mu_: the reader is gone
  std::exception_ptr error_;  // under mu_: after the ready buffers
  uint64_t in_read_ = 0;      // compressed bytes read from `in`: the thread's, the reader's after the join
  std::thread thread_;

  // The reader's side.
  bool have_current_ = false;
  Ready current_{};
  size_t current_at_ = 0;
  uint64_t taken_in_used_ = 0;  // in_used of the last buffer handed out
};

}  // namespace trainimg::inspect
