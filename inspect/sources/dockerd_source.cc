// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/dockerd_source.h"

#include "common/error.h"
#include "inspect/engine/engine.h"
#include "inspect/sources/docker_archive_stream.h"
#include "inspect/sources/image_config.h"
#include "inspect/sources/source.h"
#include "inspect/sources/tar.h"

namespace trainimg::inspect {
namespace {

class StreamSource : public ContentReader {
 public:
  explicit StreamSource(engine::Stream& s) : s_(s) {}
  size_t read(char* buf, size_t n) override { return s_.read(buf, n); }

 private:
  engine::Stream& s_;
};

class DockerdSource : public ImageSource {
 public:
  DockerdSource(std::string name, engine::Engine e) : name_(std::move(name)), engine_(std::move(e)) {}

  void load() {
    const std::string ref = reference();
    nlohmann::json j = engine_.get_json("/images/" + engine::url_escape(name_) + "/json");
    // The inspect answer carries the config under the names of the config
    // JSON ("Config", "Architecture", "Os", "RootFS.Layers").
    nlohmann::json as_config = {{"config", j.value("Config", nlohmann::json::object())},
                                {"architecture", j.value("Architecture", "")},
                                {"os", j.value("Os", "")}};
    if (j.contains("RootFS") && j["RootFS"].is_object())
      as_config["rootfs"] = {{"diff_ids", j["RootFS"].value("Layers", nlohmann::json::array())}};
    auto parsed = parse_image_config(as_config, ref, "GET /images/" + name_ + "/json");
    desc_.reference = ref;
    desc_.kind = "dockerd";
    desc_.has_config = true;
    desc_.config = parsed.config;
    desc_.config_digest = j.value("Id", "");
    desc_.layers = parsed.diff_ids;
  }

  ImageDescription describe() override { return desc_; }

  void walk(LayerVisitor& v) override {
    auto stream = engine_.open("/images/" + engine::url_escape(name_) + "/get");
    StreamSource in(*stream);
    ImageDescription got = read_docker_archive_stream(in, reference(), "", &v);
    if (got.config_digest != desc_.config_digest)
      throw Error(reference(), "the image changed while it was read: config " + got.config_digest + ", expected " +
                                   desc_.config_digest);
  }

 private:
  std::string reference() const { return "dockerd://" + name_; }
  std::string name_;
  engine::Engine engine_;
  ImageDescription desc_;
};

}  // namespace

std::unique_ptr<ImageSource> open_dockerd_source(const std::string& name) {
  auto src = std::make_unique<DockerdSource>(name, engine::Engine::connect());
  src->load();
  return src;
}

}  // namespace trainimg::inspect
