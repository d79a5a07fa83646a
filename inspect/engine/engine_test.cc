// SPDX-License-Identifier: GPL-3.0-or-later
// The Engine client against the real dockerd (skipped, saying so, when
// /var/run/docker.sock is absent), and against a fake daemon on a unix socket
// for the failures a real daemon will not produce on demand (a connection cut
// mid-stream, a non-JSON error body).
#include "inspect/engine/engine.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/error.h"
#include "common/fd.h"
#include "inspect/sources/string_source.h"
#include "inspect/testing/image_builder.h"

namespace trainimg::inspect::engine {
namespace {

constexpr const char* kSocket = "/var/run/docker.sock";

bool have_daemon() {
  struct stat st;
  return ::stat(kSocket, &st) == 0 && S_ISSOCK(st.st_mode);
}

#define REQUIRE_DAEMON() \
  if (!have_daemon()) GTEST_SKIP() << "no Docker daemon socket at " << kSocket << "; real-daemon test skipped"

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.what()) + (e.diagnostic().hint.empty() ? "" : " | hint: " + e.diagnostic().hint);
  }
  return "no error";
}

// A one-file rootfs tar, built in memory, for POST /images/create?fromSrc=-.
std::string tiny_rootfs_tar(const std::string& content) {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_open(
      a, &out, nullptr,
      [](archive*, void* o, const void* buf, size_t n) -> la_ssize_t {
        static_cast<std::string*>(o)->append(static_cast<const char*>(buf), n);
        return la_ssize_t(n);
      },
      nullptr);
  archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, "hello.txt");
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_perm(e, 0644);
  archive_entry_set_size(e, la_int64_t(content.size()));
  archive_write_header(a, e);
  archive_write_data(a, content.data(), content.size());
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

TEST(Engine, NegotiatesTheApiVersionWithTheRealDaemon) {
  REQUIRE_DAEMON();
  Engine e = Engine::connect(kSocket);
  EXPECT_FALSE(e.api_version().empty());
  auto v = e.get_json("/version");
  ASSERT_TRUE(v.contains("ApiVersion"));
  // The session never asks for more than the daemon offers.
  EXPECT_LE(std::stod(e.api_version()), std::stod(v["ApiVersion"].get<std::string>()) + 1e-9);
}

TEST(Engine, UnknownImageGivesTheDaemons404Message) {
  REQUIRE_DAEMON();
  Engine e = Engine::connect(kSocket);
  std::string msg = error_of([&] { e.get_json("/images/trainimg-no-such-image:1/json"); });
  EXPECT_NE(msg.find("GET /images/trainimg-no-such-image:1/json: HTTP 404: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such image: trainimg-no-such-image:1"), std::string::npos) << msg;
}

TEST(Engine, OpenFailsBeforeTheFirstByteForAnUnknownImage) {
  REQUIRE_DAEMON();
  Engine e = Engine::connect(kSocket);
  std::string msg = error_of([&] { e.open("/images/trainimg-no-such-image:1/get"); });
  EXPECT_NE(msg.find("HTTP 404"), std::string::npos) << msg;
}

TEST(Engine, PostStreamsABodyAndGetStreamsTheImageBack) {
  REQUIRE_DAEMON();
  Engine e = Engine::connect(kSocket);
  std::string tar = tiny_rootfs_tar("hello from trainimg\n");
  size_t off = 0;
  std::string progress;
  e.post("/images/create?fromSrc=-&repo=trainimg-engine-test&tag=1",
         [&](char* buf, size_t n) {
           size_t take = std::min(n, tar.size() - off);
           std::memcpy(buf, tar.data() + off, take);
           off += take;
           return take;
         },
         {"Content-Type: application/x-tar"}, [&](std::string_view s) { progress.append(s); });
  EXPECT_EQ(off, tar.size());
  EXPECT_NE(progress.find("sha256:"), std::string::npos) << progress;

  // The export is a docker-archive tar: pulled in small reads, whole.
  auto s = e.open("/images/trainimg-engine-test:1/get");
  std::string archive_bytes;
  char buf[100];
  while (size_t got = s->read(buf, sizeof buf)) archive_bytes.append(buf, got);
  EXPECT_EQ(s->bytes_read(), archive_bytes.size());
  EXPECT_NE(archive_bytes.find("manifest.json"), std::string::npos);
  EXPECT_NE(archive_bytes.find("trainimg-engine-test:1"), std::string::npos);
}

TEST(Engine, LoadReportsTheLoadedTagAndRemoveImageDeletesIt) {
  REQUIRE_DAEMON();
  Engine e = Engine::connect(kSocket);
  testing::ImageSpec img;
  img.tag = "trainimg-engine-test-load:" + std::to_string(::getpid());
  img.layer().file("/hello.txt", "hello from trainimg\n");
  testing::TempDir t;
  testing::write_docker_archive(img, t / "i.tar", testing::ArchiveLayout::Legacy);
  const std::string tar = testing::read_bytes(t / "i.tar");
  StringSource tar_bytes(tar);
  auto loaded = e.load([&](char* buf, size_t n) { return tar_bytes.read(buf, n); });
  ASSERT_EQ(loaded, std::vector<std::string>{img.tag});
  EXPECT_EQ(e.get_json("/images/" + url_escape(img.tag) + "/json")["RootFS"]["Layers"][0],
            testing::diff_ids(img)[0]);
  e.remove_image(img.tag);
  std::string msg = error_of([&] { e.get_json("/images/" + url_escape(img.tag) + "/json"); });
  EXPECT_NE(msg.find("HTTP 404"), std::string::npos) << msg;
  msg = error_of([&] { e.remove_image(img.tag); });
  EXPECT_NE(msg.find("DELETE /images/" + url_escape(img.tag) + "?force=1: HTTP 404: "), std::string::npos)
      << msg;
}

TEST(Engine, LoadOfANonArchiveIsTheDaemonsError) {
  REQUIRE_DAEMON();
  Engine e = Engine::connect(kSocket);
  const std::string bytes(4096, 'x');
  StringSource garbage(bytes);
  std::string msg = error_of([&] { e.load([&](char* buf, size_t n) { return garbage.read(buf, n); }); });
  EXPECT_TRUE(msg.starts_with("unix:///var/run/docker.sock: POST /images/load?quiet=1: ")) << msg;
}

TEST(Engine, MissingSocketSaysTheDaemonIsUnreachable) {
  std::string msg = error_of([] { Engine::connect("/nonexistent/trainimg/docker.sock"); });
  EXPECT_NE(msg.find("unix:///nonexistent/trainimg/docker.sock: cannot connect to the Docker daemon"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("hint: is dockerd running"), std::string::npos) << msg;
}

TEST(Engine, DockerHostMustBeAUnixSocket) {
  ::setenv("DOCKER_HOST", "tcp://127.0.0.1:2375", 1);
  std::string msg = error_of([] { socket_path_from_env(); });
  ::setenv("DOCKER_HOST", "unix:///run/user/1000/docker.sock", 1);
  std::string path = socket_path_from_env();
  ::unsetenv("DOCKER_HOST");
  EXPECT_EQ(msg,
            "DOCKER_HOST: unsupported DOCKER_HOST 'tcp://127.0.0.1:2375': only unix:///PATH sockets are "
            "supported | hint: unset DOCKER_HOST to use /var/run/docker.sock");
  EXPECT_EQ(path, "/run/user/1000/docker.sock");
  EXPECT_EQ(socket_path_from_env(), "/var/run/docker.sock");
}

TEST(Engine, UrlEscapeKeepsUnreservedOnly) {
  EXPECT_EQ(url_escape("img:tag"), "img%3Atag");
  EXPECT_EQ(url_escape(R"({"A":"1 2"})"), "%7B%22A%22%3A%221%202%22%7D");
  EXPECT_EQ(url_escape("a-b_c.d~e"), "a-b_c.d~e");
}

// A fake daemon: answers each connection with a canned response, then closes.
class FakeDaemon {
 public:
  explicit FakeDaemon(std::vector<std::string> responses) : responses_(std::move(responses)) {
    dir_ = std::filesystem::temp_directory_path() / ("trainimg-fake-daemon-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "d.sock").string();
    ::unlink(path_.c_str());
    listen_.reset(::socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    if (::bind(listen_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_.get(), 8) != 0)
      throw std::runtime_error("fake daemon: cannot listen");
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeDaemon() {
    thread_.join();
    std::filesystem::remove_all(dir_);
  }
  const std::string& path() const { return path_; }
  uint64_t sent() const { return sent_.load(); }

 private:
  void serve() {
    for (const auto& r : responses_) {
      UniqueFd c(::accept(listen_.get(), nullptr, nullptr));
      if (!c) return;
      char req[4096];
      std::string got;
      while (got.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::read(c.get(), req, sizeof req);
        if (n <= 0) break;
        got.append(req, size_t(n));
      }
      size_t off = 0;
      while (off < r.size()) {
        ssize_t n = ::send(c.get(), r.data() + off, r.size() - off, MSG_NOSIGNAL);  // the client may hang up first
        if (n <= 0) break;
        off += size_t(n);
        sent_ += uint64_t(n);
      }
    }
  }
  std::vector<std::string> responses_;
  std::filesystem::path dir_;
  std::string path_;
  UniqueFd listen_;
  std::atomic<uint64_t> sent_{0};
  std::thread thread_;
};

const std::string kPing = "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Length: 2\r\n\r\nOK";

TEST(Engine, FakeDaemonConnectionCutMidStreamIsAClearError) {
  // Announces 1000 bytes, sends 10, hangs up: what a killed dockerd looks like.
  FakeDaemon d({kPing, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789"});
  Engine e = Engine::connect(d.path());
  EXPECT_EQ(e.api_version(), "1.41");
  std::string seen;
  std::string msg = error_of([&] { e.get("/images/x/get", [&](std::string_view s) { seen.append(s); }); });
  EXPECT_EQ(seen, "0123456789");
  EXPECT_NE(msg.find("connection to the Docker daemon lost during GET /images/x/get after 10 bytes"), std::string::npos)
      << msg;
}

TEST(Engine, FakeDaemonSlowReaderHoldsTheSenderBack) {
  constexpr size_t kBody = 32u << 20;
  FakeDaemon d({kPing, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kBody) + "\r\n\r\n" +
                           std::string(kBody, 'x')});
  Engine e = Engine::connect(d.path());
  auto s = e.open("/images/big/get");
  char one;
  ASSERT_EQ(s->read(&one, 1), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The client buffers at most 1 MiB and the socket a little more: the
  // sender is blocked far short of the 32 MiB body.
  EXPECT_LT(d.sent(), uint64_t(8u << 20));
  std::string buf(1 << 16, '\0');
  uint64_t total = 1;
  while (size_t n = s->read(buf.data(), buf.size())) total += n;
  EXPECT_EQ(total, kBody);
}

TEST(Engine, FakeDaemonPlainTextErrorBodyIsShownVerbatim) {
  FakeDaemon d({kPing, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 12\r\n\r\ndisk full!\r\n"});
  Engine e = Engine::connect(d.path());
  std::string msg = error_of([&] { e.get_json("/info"); });
  EXPECT_EQ(msg, "unix://" + d.path() + ": GET /info: HTTP 500: disk full!");
}

TEST(Engine, FakeDaemonWithoutApiVersionHeaderFallsBackToVersion) {
  FakeDaemon d({"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK",
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 21\r\n\r\n{\"ApiVersion\":\"1.30\"}"});
  Engine e = Engine::connect(d.path());
  EXPECT_EQ(e.api_version(), "1.30");
}

TEST(Engine, FakeDaemonTooOldIsRefused) {
  FakeDaemon d({"HTTP/1.1 200 OK\r\nApi-Version: 1.12\r\nContent-Length: 2\r\n\r\nOK"});
  std::string msg = error_of([&] { Engine::connect(d.path()); });
  EXPECT_EQ(msg, "unix://" + d.path() +
                     ": the daemon speaks Engine API 1.12, older than the minimum 1.25 | hint: upgrade Docker");
}

TEST(Engine, SinkExceptionAbortsTheTransferAndPropagates) {
  FakeDaemon d({kPing, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"});
  Engine e = Engine::connect(d.path());
  EXPECT_THROW(e.get("/x", [](std::string_view) { throw std::runtime_error("consumer failed"); }),
               std::runtime_error);
}

TEST(Engine, BodySourceExceptionCrossesNoCurlCallback) {
  FakeDaemon d({kPing, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"});
  Engine e = Engine::connect(d.path());
  std::string msg = error_of([&] {
    e.post("/build", [](char*, size_t) -> size_t { throw Error("ctx", "cannot read the build context"); }, {},
           [](std::string_view) {});
  });
  EXPECT_EQ(msg, "ctx: cannot read the build context");
}

}  // namespace
}  // namespace trainimg::inspect::engine
