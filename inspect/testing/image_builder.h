// SPDX-License-Identifier: GPL-3.0-or-later
// Test images built from nothing, for every image source kind: one ImageSpec
// (layers of entries with their bytes, whiteouts included, plus the config)
// written out as a real layer tar, a real docker archive (old `<id>/layer.tar`
// layout or the OCI-in-archive layout of Docker 25+), a real OCI image layout
// (skopeo reads it) or an unpacked root file system; memory_source() offers
// the same layers with no file format at all, for rule unit tests.
//
// Compiled into trainimg_inspect (it is small and needs libarchive, which
// tests/ does not link). Usage:
//   ImageSpec img;
//   img.layer().dir("/opt").file("/opt/a", "x");
//   img.layer().whiteout("/opt/a").file("/opt/b", "y", 0755);
//   write_docker_archive(img, dir + "/img.tar");
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inspect/sources/source.h"
#include "inspect/tree.h"

namespace trainimg::inspect::testing {

struct SpecEntry {
  Entry entry;       ///< path absolute ("/a/b"); size is taken from data
  std::string data;  ///< bytes of a regular file
  /// Written verbatim as the tar member name instead of entry.path (hostile
  /// fixtures: "../x", "/abs"); empty = "." + entry.path style names.
  std::string raw_name;
};

struct LayerSpec {
  std::vector<SpecEntry> entries;
  LayerSpec& dir(const std::string& path, uint32_t mode = 0755);
  LayerSpec& file(const std::string& path, const std::string& data, uint32_t mode = 0644);
  LayerSpec& symlink(const std::string& path, const std::string& target);
  /// Hard link `path` to the earlier member `target` of this layer.
  LayerSpec& hardlink(const std::string& path, const std::string& target);
  /// `.wh.NAME` beside `path`: deletes `path` from lower layers.
  LayerSpec& whiteout(const std::string& path);
  /// `DIR/.wh..wh..opq`: hides lower-layer children of `dir`.
  LayerSpec& opaque(const std::string& dir);
  LayerSpec& fifo(const std::string& path);
  LayerSpec& chardev(const std::string& path, uint32_t major, uint32_t minor);
  LayerSpec& raw(SpecEntry e);
};

struct ImageSpec {
  std::vector<LayerSpec> layers;
  ImageConfig config;           ///< architecture/os default to amd64/linux
  std::string tag = "trainimg-fixture:latest";
  LayerSpec& layer() { return layers.emplace_back(); }
};

enum class Compression { None, Gzip, Zstd };
enum class ArchiveLayout { Legacy, Oci };  ///< `<id>/layer.tar` vs `blobs/sha256/…`

/// The layer as tar bytes (pax format, mtime 0, uid/gid 0, names "./a/b").
std::string layer_tar(const LayerSpec& l, Compression c = Compression::None);
/// sha256 digests of the uncompressed layer tars: the config's diff_ids.
std::vector<std::string> diff_ids(const ImageSpec& img);
/// The image config JSON (docker/OCI) with rootfs.diff_ids.
std::string config_json(const ImageSpec& img);

/// What `docker save` writes. Legacy: `<hex>/layer.tar`, `<hex>.json`,
/// manifest.json, repositories. Oci: blobs/sha256/*, index.json,
/// oci-layout and manifest.json (Layers naming the blobs).
void write_docker_archive(const ImageSpec& img, const std::string& path, ArchiveLayout layout = ArchiveLayout::Oci,
                          Compression c = Compression::None);

struct OciOptions {
  Compression compression = Compression::Gzip;
  /// Index → image index (manifest list) with an arm64 decoy and the amd64
  /// manifest, instead of index → manifest.
  bool manifest_list = false;
};
/// An OCI image layout in `dir` (created), tagged with img.tag's part after
/// the ':' through org.opencontainers.image.ref.name.
void write_oci_layout(const ImageSpec& img, const std::string& dir, const OciOptions& o = {});

/// The layers applied to a real directory `dir` (created), whiteouts and
/// opaque directories honoured by this builder's own simple rules (layer
/// whiteouts first, then its entries) — independent of build_tree().
void write_rootfs(const ImageSpec& img, const std::string& dir);

/// The layers as an ImageSource with no file format (kind "memory"; layer ids
/// "layer0", "layer1", …). A stand-in for unit tests of rules, not a real
/// image: tests that use it say so in their names.
std::unique_ptr<ImageSource> memory_source(const ImageSpec& img);

/// The merged tree as text, one line per entry ("path type mode size ->link
/// [captured JSON]"), removed entries after "removed:" with their deleting
/// layer when `with_layers`. Layer ids and mtimes are left out otherwise, so
/// trees of the same image from different source kinds compare equal.
std::string tree_listing(const MergedTree& t, bool with_layers = false);

/// read_all capture: the whole file as a JSON string (tests only).
nlohmann::json capture_all(const Entry& e, ContentReader& r);

/// A fresh empty directory under $TMPDIR (or /tmp) for one test; removed by
/// the TempDir destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Writes bytes to a file (tests only; not atomic).
void write_bytes(const std::string& path, const std::string& data);
std::string read_bytes(const std::string& path);

}  // namespace trainimg::inspect::testing
