// SPDX-License-Identifier: GPL-3.0-or-later
// The import's two summary lines, shared by `trainimg import` and
// `trainimg build --sqsh`.
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>

#include "builder/import/import.h"
#include "common/units.h"

namespace trainimg::builder {

ImportProgressFn import_progress_printer(const std::string& mode, std::ostream& err, bool err_is_tty) {
  if (mode == "json") {
    return [&err](const ImportProgress& p) {
      nlohmann::ordered_json j = {
          {"schema", "trainimg.import-progress/v1"},
          {"phase", p.phase},
          {"image_digest",
           p.image_digest.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(p.image_digest)},
          {"files", p.files},
          {"bytes", p.bytes},
          {"total_files", p.total_files},
          {"total_bytes", p.total_bytes}};
      if (!p.reuse.is_null()) j["reuse"] = p.reuse;
      err << j.dump() << "\n";
    };
  }
  if (!(mode == "tty" || (mode == "auto" && err_is_tty))) return {};
  // One rewritten line: the phase the import is in and, while layers still
  // download under it, the download's share.
  struct Last {
    ImportProgress phase, download;
  };
  auto last = std::make_shared<Last>();
  return [&err, last](const ImportProgress& p) {
    (p.phase == "download" ? last->download : last->phase) = p;
    const ImportProgress& q = last->phase;
    const ImportProgress& d = last->download;
    std::string line = "\r\033[K";
    if (!q.phase.empty()) {
      line += q.phase + ": " + std::to_string(q.files) + " files, " + format_byte_size(q.bytes);
      if (q.total_files)
        line += " of " + std::to_string(q.total_files) + " files, " + format_byte_size(q.total_bytes);
    }
    if (!d.phase.empty() && (d.files < d.total_files || p.phase == "download") && q.phase != "done")
      line += std::string(q.phase.empty() ? "" : "; ") + "download: " + std::to_string(d.files) + "/" +
              std::to_string(d.total_files) + " layers, " + format_byte_size(d.bytes) + " of " +
              format_byte_size(d.total_bytes);
    if (p.phase == "done") line += "\n";
    err << line << std::flush;
  };
}

std::string import_summary(const ImportResult& r) {
  std::string algo =
      r.sidecar.contains("compression") ? r.sidecar["compression"].value("algorithm", "?") : "?";
  return r.output + "\n" + "  " + format_byte_size(r.image_bytes) + " (" + algo +
         (r.info.data_compressed ? "" : ", data uncompressed") + ", " +
         std::to_string(r.info.block_size / 1024) + " KiB blocks), " + std::to_string(r.files) + " files, " +
         format_byte_size(r.input_bytes) + " of file data, " + std::to_string(r.info.inode_count) +
         " inodes, " + std::to_string(r.passes) + (r.passes == 1 ? " pass" : " passes") + "\n" +
         "  sidecar: " + r.output + ".json\n";
}

}  // namespace trainimg::builder
