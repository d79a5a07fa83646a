// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg inspect, end to end: open, gather, judge, report.
#include "inspect/inspect.h"

#include "inspect/facts/gather.h"
#include "inspect/sources/source.h"
#include "inspect/sources/sqsh_source.h"

namespace trainimg::inspect {

Report make_report(const facts::ImageFacts& f, const ImageExpectations& e) {
  Report r;
  r.kind = "inspect";
  r.inputs = {f.reference};
  r.rules = image_rules();
  r.findings = check_image(f, e);
  r.facts = facts_json(f);
  r.text_facts = facts_rows(f);
  if (!f.truncated.empty()) r.notes.push_back(f.truncated);
  for (const auto& n : f.elf_notes) r.notes.push_back("could not read all of " + n.path + ": " + n.error);
  return r;
}

namespace {
// The whole report of an open source; `name` when the source names nothing.
Report inspect_source(ImageSource& src, const std::string& name, const ImageExpectations& e) {
  facts::ImageFacts f = facts::gather_facts(src);
  if (f.reference.empty()) f.reference = name;
  return make_report(f, e);
}
}  // namespace

Report inspect_image(const std::string& uri, const ImageExpectations& e, const SourceOptions& opt) {
  return inspect_source(*open_source(uri, opt), uri, e);
}

Report inspect_sqsh(int fd, const std::string& name, const ImageExpectations& e) {
  return inspect_source(*open_sqsh_source(fd, name), name, e);
}

}  // namespace trainimg::inspect
