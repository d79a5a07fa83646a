// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/report.h"

#include <unistd.h>

#include <cstdlib>

#include "common/error.h"

namespace trainimg {

FailOn parse_fail_on(const std::string& s) {
  if (s == "error") return FailOn::Error;
  if (s == "warning") return FailOn::Warning;
  if (s == "never") return FailOn::Never;
  throw Error("", "--fail-on: expected error, warning or never, got '" + s + "'");
}

Format parse_format(const std::string& s) {
  if (s == "text") return Format::Text;
  if (s == "json") return Format::Json;
  if (s == "sarif") return Format::Sarif;
  if (s == "junit") return Format::Junit;
  throw Error("", "--format: expected text, json, sarif or junit, got '" + s + "'");
}

int exit_code(const Report& r, FailOn fail_on) {
  if (fail_on == FailOn::Never) return kExitOk;
  Severity threshold = fail_on == FailOn::Error ? Severity::Error : Severity::Warning;
  for (const auto& d : r.findings)
    if (d.severity >= threshold) return kExitFindings;
  return kExitOk;
}

std::string render(const Report& r, Format f, const TextOptions& opt) {
  switch (f) {
    case Format::Text: return render_text(r, opt);
    case Format::Json: return render_json(r).dump(2) + "\n";
    case Format::Sarif: return render_sarif(r).dump(2) + "\n";
    case Format::Junit: return render_junit(r);
  }
  return {};
}

bool want_color(int fd) {
  const char* nc = std::getenv("NO_COLOR");
  if (nc && *nc) return false;
  const char* term = std::getenv("TERM");
  if (term && std::string(term) == "dumb") return false;
  return ::isatty(fd) == 1;
}

}  // namespace trainimg
