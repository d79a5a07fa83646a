// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/inflate_ahead.h"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "common/cpu_slots.h"
#include "common/cpus.h"
#include "common/error.h"

namespace trainimg::inspect {
namespace {
constexpr size_t kInputChunk = 256 * 1024;  // a compressed read, as TarReader's
constexpr size_t kNone = SIZE_MAX;

bool gzip_magic(std::string_view s) {
  return s.size() >= 3 && static_cast<unsigned char>(s[0]) == 0x1f &&
         static_cast<unsigned char>(s[1]) == 0x8b && s[2] == 8;
}
}  // namespace

InflateAhead::InflateAhead(ContentReader& in, std::string file, std::string member, size_t buffers,
                           size_t buffer_bytes)
    : in_(in), file_(std::move(file)), member_(std::move(member)) {
  std::vector<char> scratch(64 * 1024);
  while (head_.size() < 3) {  // the magic, however small the reads of `in`
    std::string_view v = in_.read_view(scratch);
    if (v.empty()) break;
    head_.append(v);
  }
  inflating_ = gzip_magic(head_);
  if (!inflating_) return;
  slots_ = cpu_slots_held();
  buffers_.assign(std::max<size_t>(buffers, 2), std::vector<char>(std::max<size_t>(buffer_bytes, 4096)));
  for (size_t i = 0; i < buffers_.size(); ++i) free_.push_back(i);
  thread_ = std::thread([this] { run(); });
}

InflateAhead::~InflateAhead() {
  stop_thread();
}

void InflateAhead::stop_thread() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void InflateAhead::run() {
  name_this_thread("ti-inflate");
  std::exception_ptr error;
  try {
    CpuSlot busy(slots_);
    inflate_all();
  } catch (...) {
    error = std::current_exception();
  }
  std::lock_guard<std::mutex> l(mu_);
  error_ = error;
  done_ = true;
  cv_.notify_all();
}

namespace {
const char* isal_error(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER: return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
    case ISAL_NEED_DICT: return "the stream needs a preset dictionary";
    default: return "corrupt data";
  }
}
}  // namespace

void InflateAhead::inflate_all() {
  auto z = std::make_unique<inflate_state>();  // 40 KiB of tables: not on the stack
  isal_inflate_init(z.get());
  z->crc_flag = ISAL_GZIP;  // header parsed, CRC-32 checked
  std::vector<char> chunk(kInputChunk);
  uint64_t& read = in_read_;  // this thread's until it ends (the reader looks after the join)
  read = head_.size();
  // Input: the bytes a finished member left in ISA-L's bit buffer (carried
  // to the next member), then the rest of the view, then more of `in`.
  uint8_t carry[8];
  uint8_t* rest = nullptr;
  uint32_t rest_n = 0;
  z->next_in = reinterpret_cast<uint8_t*>(head_.data());
  z->avail_in = static_cast<uint32_t>(head_.size());
  auto more = [&] {  // false at the end of `in`
    if (rest_n > 0) {
      z->next_in = std::exchange(rest, nullptr);
      z->avail_in = std::exchange(rest_n, 0);
      return true;
    }
    std::string_view v = in_.read_view(chunk);
    if (v.empty()) return false;
    read += v.size();
    z->next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(v.data()));
    z->avail_in = static_cast<uint32_t>(v.size());
    return true;
  };
  // Compressed bytes not yet consumed: the input left and the whole bytes in
  // the bit buffer.
  auto pending = [&] {
    return uint64_t{z->avail_in} + rest_n + static_cast<uint64_t>(std::max(0, z->read_in_length) / 8);
  };
  auto offset = [&] { return std::to_string(read - pending()); };
  for (bool ended = false; !ended;) {
    size_t b = kNone;
    {
      std::unique_lock<std::mutex> l(mu_);
      if (free_.empty() && !stop_)
        wait_with_slot_freed(l, [&](std::unique_lock<std::mutex>& lk) {
          cv_.wait(lk, [&] { return !free_.empty() || stop_; });
        });
      if (stop_) return;
      b = free_.back();
      free_.pop_back();
    }
    std::vector<char>& out = buffers_[b];
    z->next_out = reinterpret_cast<uint8_t*>(out.data());
    z->avail_out = static_cast<uint32_t>(out.size());
    while (z->avail_out > 0) {
      if (z->block_state == ISAL_BLOCK_FINISH) {
        // A member ended: another follows (it starts with the magic's first
        // byte), or the stream ends and what follows is trailing data.
        const int held = std::max(0, z->read_in_length) / 8;  // >= 0 in 3.7M calls; clamped anyway
        for (int i = 0; i < held; ++i) carry[i] = static_cast<uint8_t>(z->read_in >> (8 * i));
        if (held == 0 && z->avail_in == 0 && rest_n == 0 && !more()) {
          ended = true;
          break;
        }
        const uint8_t next = held > 0 ? carry[0] : rest_n > 0 && z->avail_in == 0 ? *rest : *z->next_in;
        if (next != 0x1f) {
          ended = true;
          break;
        }
        uint8_t* p = z->next_in;
        const uint32_t n = z->avail_in;
        isal_inflate_reset(z.get());  // drops the bit buffer: its bytes are carried
        z->crc_flag = ISAL_GZIP;
        if (held > 0 && n > 0) {
          rest = p;
          rest_n = n;
        }
        z->next_in = held > 0 ? carry : p;
        z->avail_in = held > 0 ? static_cast<uint32_t>(held) : n;
        continue;
      }
      // What is inflated goes to the reader before a read that may wait (a
      // blob still downloading): the reader may be what lets it go on.
      if (z->avail_in == 0 && rest_n == 0 && z->avail_out < out.size()) break;
      if (z->avail_in == 0 && !more())
        throw Error(file_, member_ + ": gzip: the stream is truncated at compressed offset " + offset());
      int rc = isal_inflate(z.get());
      if (rc != ISAL_DECOMP_OK)
        throw Error(file_, member_ + ": gzip: " + isal_error(rc) + " at compressed offset " + offset());
    }
    std::lock_guard<std::mutex> l(mu_);
    ready_.push_back({b, out.size() - z->avail_out, read - pending()});
    cv_.notify_all();
  }
}

bool InflateAhead::next_buffer() {
  std::unique_lock<std::mutex> l(mu_);
  if (have_current_) {
    free_.push_back(current_.buffer);
    have_current_ = false;
    cv_.notify_all();
  }
  if (ready_.empty() && !done_)
    wait_with_slot_freed(
        l, [&](std::unique_lock<std::mutex>& lk) { cv_.wait(lk, [&] { return !ready_.empty() || done_; }); });
  if (ready_.empty()) {
    if (error_) std::rethrow_exception(error_);
    return false;
  }
  current_ = ready_.front();
  ready_.pop_front();
  have_current_ = true;
  current_at_ = 0;
  taken_in_used_ = current_.in_used;
  return true;
}

std::string_view InflateAhead::read_view(std::span<char> scratch) {
  if (!inflating_) {
    if (head_at_ < head_.size()) {
      std::string_view v(head_.data() + head_at_, head_.size() - head_at_);
      head_at_ = head_.size();
      return v;
    }
    return in_.read_view(scratch);
  }
  while (!have_current_ || current_at_ == current_.bytes)
    if (!next_buffer()) return {};
  std::string_view v(buffers_[current_.buffer].data() + current_at_, current_.bytes - current_at_);
  current_at_ = current_.bytes;
  return v;
}

size_t InflateAhead::read(char* buf, size_t n) {
  size_t done = 0;
  if (!inflating_) {
    size_t take = std::min(n, head_.size() - head_at_);
    std::memcpy(buf, head_.data() + head_at_, take);
    head_at_ += take;
    done = take;
    return done < n ? done + in_.read(buf + done, n - done) : done;
  }
  while (done < n) {
    if (!have_current_ || current_at_ == current_.bytes) {
      if (!next_buffer()) break;
      continue;
    }
    size_t take = std::min(n - done, current_.bytes - current_at_);
    std::memcpy(buf + done, buffers_[current_.buffer].data() + current_at_, take);
    current_at_ += take;
    done += take;
  }
  return done;
}

uint64_t InflateAhead::skip(uint64_t n) {
  if (inflating_ || !in_.seekable()) return ContentReader::skip(n);  // read and dropped
  uint64_t take = std::min<uint64_t>(n, head_.size() - head_at_);
  head_at_ += take;
  return take < n ? take + in_.skip(n - take) : take;
}

void InflateAhead::finish() {
  if (!inflating_) {
    in_.unread(head_.size() - head_at_);
    head_at_ = head_.size();
    return;
  }
  stop_thread();
  // What the reader took was inflated from in_used bytes of the last buffer
  // it took; the rest was read ahead (or follows the stream).
  in_.unread(in_read_ - taken_in_used_);
  taken_in_used_ = in_read_;
}

}  // namespace trainimg::inspect
