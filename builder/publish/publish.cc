// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/publish/publish.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace trainimg::builder {

namespace {

// State the handler touches: lock-free atomics and fixed buffers only.
std::atomic<int> g_signal{0};
std::atomic<bool> g_slot_used[SignalGuard::kSlots];
char g_slot_path[SignalGuard::kSlots][PATH_MAX];

void on_signal(int sig) {
  const int saved = errno;
  for (int i = 0; i < SignalGuard::kSlots; ++i)
    if (g_slot_used[i].load()) ::unlink(g_slot_path[i]);
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, sig)) _exit(128 + sig);  // second signal
  errno = saved;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

}  // namespace

Interrupted::Interrupted(int sig, const std::string& what)
    : Error(what, std::string("interrupted by ") + signal_name(sig),
            "nothing was published; the partial file was removed"),
      sig_(sig) {}

SignalGuard::SignalGuard() {
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read returns EINTR and the pipeline notices
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
  sigaction(SIGHUP, &sa, &old_hup_);
}

SignalGuard::~SignalGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGHUP, &old_hup_, nullptr);
  g_signal = 0;  // a signal belongs to the guard's pipeline, which has reported it
}

int SignalGuard::track(const std::string& partial_path) {
  if (partial_path.size() >= PATH_MAX) throw Error(partial_path, "path too long");
  for (int i = 0; i < kSlots; ++i) {
    if (g_slot_used[i].load()) continue;
    std::memcpy(g_slot_path[i], partial_path.c_str(), partial_path.size() + 1);
    g_slot_used[i].store(true);
    return i;
  }
  throw Error(partial_path, "too many partial outputs at once");
}

void SignalGuard::untrack(int slot) noexcept {
  if (slot >= 0 && slot < kSlots) g_slot_used[slot].store(false);
}

int pending_signal() noexcept { return g_signal.load(); }

void check_interrupted(const std::string& what) {
  if (int sig = g_signal.load()) throw Interrupted(sig, what);
}

PartialOutput::PartialOutput(const std::string& target, bool replace, bool named)
    : file_(target, replace, 0644, named), slot_(SignalGuard::track(file_.partial_path())) {}

PartialOutput::~PartialOutput() {
  file_.discard();
  SignalGuard::untrack(slot_);
}

sqsh::ImageInfo PartialOutput::verify_and_commit() {
  sqsh::ImageInfo info = verify();
  commit();
  return info;
}

sqsh::ImageInfo PartialOutput::verify() {
  check_interrupted(target());
  return sqsh::verify(fd(), target());
}

void PartialOutput::commit() {
  check_interrupted(target());
  // The handler must not unlink the name once it is the published target.
  SignalGuard::untrack(slot_);
  slot_ = -1;
  file_.commit();
}

std::string sidecar_path(const std::string& image_path) { return image_path + ".json"; }

void write_sidecar(const std::string& image_path, const nlohmann::ordered_json& doc) {
  PartialOutput out(sidecar_path(image_path), /*replace=*/true);
  out.file().write(doc.dump(2) + "\n");
  out.commit();
}

Error explain_io_error(const Error& e, const std::string& target) {
  const std::string& msg = e.diagnostic().message;
  struct Known {
    int err;
    const char* hint;
  };
  static const Known kKnown[] = {
      {ENOSPC, "the file system of the output is full"},
      {EDQUOT, "the disk quota of the output's file system is exhausted"},
      {EIO, "the storage reported an I/O error"},
      {EROFS, "the output's file system is read-only"},
  };
  for (const auto& k : kKnown) {
    if (msg.find(std::strerror(k.err)) == std::string::npos) continue;
    Diagnostic d = e.diagnostic();
    std::string dir = std::filesystem::path(target).parent_path().string();
    d.hint = std::string(k.hint) + " (" + (dir.empty() ? "." : dir) +
             "); nothing was published and the partial file was removed";
    return Error(d);
  }
  return e;
}

}  // namespace trainimg::builder
