// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/dockerd_export.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "common/error.h"
#include "common/fd.h"
#include "inspect/engine/engine.h"
#include "inspect/sources/source.h"
#include "inspect/sources/tar.h"

namespace trainimg::builder {

namespace {

using nlohmann::json;

// How far the export is read ahead of the walk (memory: at most this much
// more, whatever the image's size).
constexpr size_t kExportReadAhead = 32u << 20;

// enroot's own reference check for dockerd:// ("[[:alnum:]/._:-]+"), plus '@'
// for digests. The name goes into request paths unescaped, as the docker CLI
// sends it, so nothing else may pass.
void check_image_name(const std::string& name, const std::string& uri) {
  bool ok = !name.empty();
  for (unsigned char c : name)
    if (!std::isalnum(c) && c != '/' && c != '.' && c != '_' && c != ':' && c != '-' && c != '@') ok = false;
  if (!ok)
    throw Error(uri, "invalid image reference",
                "expected dockerd://IMAGE[:TAG] with letters, digits and / . _ : - @ only");
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

int64_t days_in_month(int64_t y, int64_t m) {
  static constexpr int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

std::string random_token() {
  unsigned char b[8] = {};
  UniqueFd fd(::open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (!fd || ::read(fd.get(), b, sizeof b) != static_cast<ssize_t>(sizeof b))
    throw_errno("/dev/urandom", "read failed");
  char out[40];
  std::snprintf(out, sizeof out, "%d-%02x%02x%02x%02x%02x%02x%02x%02x", static_cast<int>(::getpid()), b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7]);
  return out;
}

}  // namespace

std::optional<int64_t> parse_rfc3339(const std::string& s) {
  size_t i = 0;
  auto digits = [&](size_t n) -> int64_t {  // n digits at i, or -1
    if (i + n > s.size()) return -1;
    int64_t v = 0;
    for (size_t k = 0; k < n; ++k, ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  auto sep = [&](char c) { return i < s.size() && s[i++] == c; };
  int64_t y = digits(4);
  if (y < 0 || !sep('-')) return std::nullopt;
  int64_t mo = digits(2);
  if (mo < 1 || mo > 12 || !sep('-')) return std::nullopt;
  int64_t d = digits(2);
  if (d < 1 || d > days_in_month(y, mo) || !sep('T')) return std::nullopt;
  int64_t h = digits(2);
  if (h < 0 || h > 23 || !sep(':')) return std::nullopt;
  int64_t mi = digits(2);
  if (mi < 0 || mi > 59 || !sep(':')) return std::nullopt;
  int64_t sec = digits(2);
  if (sec < 0 || sec > 60) return std::nullopt;  // 60: a leap second
  if (i < s.size() && s[i] == '.') {
    size_t start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return std::nullopt;
  }
  int64_t offset = 0;
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int64_t sign = s[i++] == '-' ? -1 : 1;
    int64_t oh = digits(2);
    if (oh < 0 || oh > 23 || !sep(':')) return std::nullopt;
    int64_t om = digits(2);
    if (om < 0 || om > 59) return std::nullopt;
    offset = sign * (oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return days * 86400 + h * 3600 + mi * 60 + sec - offset;
}

int64_t image_created(const std::string& created) {
  std::optional<int64_t> t = parse_rfc3339(created);
  return t && *t > 0 ? *t : 0;
}

namespace {

// The daemon's export, read on a thread of its own up to `ahead` bytes ahead
// of the walk. The daemon writes the tar only as fast as it is read: read
// from the walking thread, it stalled each time that thread waited for the
// compressors (a full block queue), and export and compression took turns
// instead of overlapping.
class ReadAhead : public inspect::ContentReader {
 public:
  ReadAhead(inspect::engine::Stream& s, size_t ahead) : s_(s), ahead_(ahead), thread_([this] { run(); }) {}
  ~ReadAhead() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();  // after at most one more read from the daemon
  }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  size_t read(char* buf, size_t n) override {
    if (n == 0) return 0;
    if (front_.size() == front_pos_) {
      std::unique_lock<std::mutex> lock(mu_);
      if (!front_.empty()) spare_.push_back(std::move(front_));
      cv_.wait(lock, [&] { return !queue_.empty() || done_; });
      if (queue_.empty()) {
        if (error_) std::rethrow_exception(error_);
        return 0;
      }
      front_ = std::move(queue_.front());
      queue_.pop_front();
      buffered_ -= front_.size();
      front_pos_ = 0;
      cv_.notify_all();  // room for the reader
    }
    size_t take = std::min(n, front_.size() - front_pos_);
    std::memcpy(buf, front_.data() + front_pos_, take);
    front_pos_ += take;
    return take;
  }

 private:
  static constexpr size_t kChunk = 1u << 20;

  void run() {
    try {
      for (;;) {
        std::vector<char> chunk;
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (!spare_.empty()) {
            chunk = std::move(spare_.back());
            spare_.pop_back();
          }
        }
        chunk.resize(kChunk);
        size_t got = 0;
        while (got < kChunk) {
          size_t k = s_.read(chunk.data() + got, kChunk - got);
          if (k == 0) break;
          got += k;
        }
        if (got == 0) break;
        chunk.resize(got);
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || buffered_ + got <= ahead_ || queue_.empty(); });
        if (stop_) return;
        buffered_ += got;
        const size_t buffered = buffered_;
        queue_.push_back(std::move(chunk));
        cv_.notify_all();
        lock.unlock();
        if (got < kChunk) break;  // the end of the stream
        DaemonYield::pace(buffered, ahead_);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
    }
    DaemonYield::stream_ended();
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    cv_.notify_all();
  }

  inspect::engine::Stream& s_;
  const size_t ahead_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<char>> queue_;   // guarded by mu_
  std::vector<std::vector<char>> spare_;  // guarded by mu_
  size_t buffered_ = 0;                   // guarded by mu_
  bool stop_ = false, done_ = false;      // guarded by mu_
  std::exception_ptr error_;              // guarded by mu_
  std::vector<char> front_;               // the walk's: being read
  size_t front_pos_ = 0;
  std::thread thread_;  // last: started once the rest is constructed
};

// Removes the container made for one export, whatever happens to the walk.
class ContainerLease {
 public:
  ContainerLease(const inspect::engine::Engine& engine, const std::string& image)
      : engine_(engine), token_(random_token()) {
    json body = {{"Image", image},
                 {"Cmd", json::array({"true"})},  // never run; a Cmd lets images without one be created
                 {"Labels", {{"trainimg.import", token_}}},
                 {"NetworkDisabled", true},
                 {"HostConfig", {{"NetworkMode", "none"}}}};
    std::string text = body.dump(), reply;
    size_t pos = 0;
    engine_.post(
        "/containers/create",
        [&](char* buf, size_t n) {
          size_t k = std::min(n, text.size() - pos);
          text.copy(buf, k, pos);
          pos += k;
          return k;
        },
        {"Content-Type: application/json"}, [&](std::string_view chunk) { reply.append(chunk); });
    json j = json::parse(reply, nullptr, false);
    if (!j.is_object() || !j.contains("Id") || !j["Id"].is_string())
      throw Error(engine_.endpoint(), "POST /containers/create: unexpected reply: " + reply.substr(0, 200));
    id_ = j["Id"].get<std::string>();
  }
  ~ContainerLease() {
    try {
      std::string filters = json{{"label", json::array({"trainimg.import=" + token_})}}.dump();
      engine_.post(
          "/containers/prune?filters=" + inspect::engine::url_escape(filters),
          [](char*, size_t) { return size_t(0); }, {}, [](std::string_view) {});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "trainimg: warning: could not remove container %s: %s\n", id_.c_str(), e.what());
    }
  }
  ContainerLease(const ContainerLease&) = delete;
  ContainerLease& operator=(const ContainerLease&) = delete;
  const std::string& id() const { return id_; }

 private:
  const inspect::engine::Engine& engine_;
  std::string token_, id_;
};

class DockerdExport : public inspect::ImageSource {
 public:
  explicit DockerdExport(std::string image)
      : image_(std::move(image)), uri_("dockerd://" + image_), engine_(inspect::engine::Engine::connect()) {
    json j = engine_.get_json("/images/" + image_ + "/json");
    json cfg = {{"architecture", j.value("Architecture", "")}, {"os", j.value("Os", "")}};
    if (j.contains("Config") && j["Config"].is_object()) cfg["config"] = j["Config"];
    desc_.config = inspect::parse_image_config(cfg, uri_, "image config").config;
    desc_.reference = uri_;
    desc_.kind = "dockerd";
    desc_.has_config = true;
    desc_.config_digest = j.value("Id", "");
    if (j.contains("RepoDigests") && j["RepoDigests"].is_array() && !j["RepoDigests"].empty() &&
        j["RepoDigests"][0].is_string()) {
      std::string rd = j["RepoDigests"][0].get<std::string>();
      auto at = rd.find('@');
      if (at != std::string::npos) desc_.digest = rd.substr(at + 1);
    }
    desc_.layers = {"export"};
    const json created = j.value("Created", json());
    created_ = image_created(created.is_string() ? created.get<std::string>() : "");
  }

  int64_t created() const { return created_; }

  inspect::ImageDescription describe() override { return desc_; }

  void walk(inspect::LayerVisitor& v) override {
    ContainerLease c(engine_, image_);
    auto stream = engine_.open("/containers/" + c.id() + "/export");
    ReadAhead bytes(*stream, kExportReadAhead);
    inspect::LayerInput where{uri_, "export of container " + c.id().substr(0, 12), "export", 0};
    inspect::walk_layer_tar(bytes, where, v);
  }

 private:
  std::string image_, uri_;
  inspect::engine::Engine engine_;
  inspect::ImageDescription desc_;
  int64_t created_ = 0;
};

}  // namespace

namespace {
// The DaemonYield of the import under way (one per process: CPU affinity is
// the process's threads' state).
std::atomic<DaemonYield*> g_yield{nullptr};
}  // namespace

DaemonYield::DaemonYield() {
  // Linux keeps the nice value per thread: PRIO_PROCESS with a thread id sets
  // the calling thread's, and threads created later start from it. Best
  // effort throughout: the import is the same without it.
  const auto tid = static_cast<id_t>(::gettid());
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  if (!(now == -1 && errno != 0))
    (void)::setpriority(PRIO_PROCESS, tid, std::min(19, now + kDaemonYieldNice));

  if (::sched_getaffinity(0, sizeof full_, &full_) == 0 && CPU_COUNT(&full_) >= 2) {
    narrow_ = full_;
    // The first CPU is the one left: it is where a VM's interrupts usually land.
    int cpu = 0;
    while (!CPU_ISSET(cpu, &narrow_)) ++cpu;
    CPU_CLR(cpu, &narrow_);
    can_narrow_ = true;
  }
  g_yield.store(this);
}

DaemonYield::~DaemonYield() {
  g_yield.store(nullptr);
  std::lock_guard<std::mutex> l(mu_);
  if (narrowed_) apply(false);
}

void DaemonYield::apply(bool narrow) {
  const cpu_set_t& set = narrow ? narrow_ : full_;
  // Every thread of the process: the compressors, the output's writer, the
  // read-ahead, the walk; a thread started later inherits its creator's.
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    const std::string name = e.path().filename().string();
    char* end = nullptr;
    const long tid = std::strtol(name.c_str(), &end, 10);
    if (end == name.c_str() || *end != '\0') continue;
    (void)::sched_setaffinity(static_cast<pid_t>(tid), sizeof set, &set);
  }
  narrowed_ = narrow;
}

void DaemonYield::pace(size_t buffered, size_t capacity) {
  DaemonYield* y = g_yield.load();
  if (!y || !y->can_narrow_) return;
  std::lock_guard<std::mutex> l(y->mu_);
  if (!y->narrowed_ && buffered <= capacity / 4) {
    y->apply(true);
  } else if (y->narrowed_ && buffered >= capacity - capacity / 4) {
    y->apply(false);
  }
}

void DaemonYield::stream_ended() {
  DaemonYield* y = g_yield.load();
  if (!y) return;
  std::lock_guard<std::mutex> l(y->mu_);
  if (y->narrowed_) y->apply(false);
}

bool DaemonYield::narrowed() const {
  std::lock_guard<std::mutex> l(mu_);
  return narrowed_;
}

std::unique_ptr<inspect::ImageSource> open_dockerd_export(const std::string& image, int64_t& created) {
  check_image_name(image, "dockerd://" + image);
  auto src = std::make_unique<DockerdExport>(image);
  created = src->created();
  return src;
}

}  // namespace trainimg::builder
