// SPDX-License-Identifier: GPL-3.0-or-later
#include "builder/import/dockerd_export.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fd.h"
#include "inspect/engine/engine.h"
#include "inspect/sources/image_config.h"
#include "inspect/sources/tar_layer.h"

namespace trainimg::builder {

namespace {

using nlohmann::json;

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

std::string random_token() {
  unsigned char b[8] = {};
  UniqueFd fd(::open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (!fd || ::read(fd.get(), b, sizeof b) != static_cast<ssize_t>(sizeof b)) throw_errno("/dev/urandom", "read failed");
  char out[40];
  std::snprintf(out, sizeof out, "%d-%02x%02x%02x%02x%02x%02x%02x%02x", static_cast<int>(::getpid()), b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7]);
  return out;
}

class StreamBytes : public inspect::ByteSource {
 public:
  explicit StreamBytes(inspect::engine::Stream& s) : s_(s) {}
  size_t read(char* buf, size_t n) override { return s_.read(buf, n); }

 private:
  inspect::engine::Stream& s_;
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
          "/containers/prune?filters=" + inspect::engine::url_escape(filters), [](char*, size_t) { return size_t(0); },
          {}, [](std::string_view) {});
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
  }

  inspect::ImageDescription describe() override { return desc_; }

  void walk(inspect::LayerVisitor& v) override {
    ContainerLease c(engine_, image_);
    auto stream = engine_.open("/containers/" + c.id() + "/export");
    StreamBytes bytes(*stream);
    inspect::LayerInput where{uri_, "export of container " + c.id().substr(0, 12), "export", 0};
    inspect::walk_layer_tar(bytes, where, v);
  }

 private:
  std::string image_, uri_;
  inspect::engine::Engine engine_;
  inspect::ImageDescription desc_;
};

}  // namespace

std::unique_ptr<inspect::ImageSource> open_dockerd_export(const std::string& image) {
  check_image_name(image, "dockerd://" + image);
  return std::make_unique<DockerdExport>(image);
}

}  // namespace trainimg::builder
