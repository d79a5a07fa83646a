// SPDX-License-Identifier: GPL-3.0-or-later
// JUnit XML: one testcase per evaluated rule, a <failure> per finding at
// error/warning severity (infos go to system-out), so CI dashboards show
// every rule as a passing or failing check. Findings policy suppressed are
// no failures; with --show-suppressed they are listed in system-out.
#include <sstream>

#include "common/report.h"
#include "common/xml.h"

namespace trainimg {

std::string xml_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (unsigned char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
          o += "?";
        else
          o += static_cast<char>(c);
    }
  }
  return o;
}

std::string render_junit(const Report& r) {
  std::vector<RuleInfo> rules = r.rules;
  // Findings with ids not in the rule list (or with no id) still get a case.
  for (const auto& d : r.findings) {
    bool known = false;
    for (const auto& ru : rules) known = known || ru.id == d.rule_id;
    if (!known)
      rules.push_back(
          RuleInfo{d.rule_id.empty() ? "trainimg" : d.rule_id, d.severity, d.message, d.hint, d.seed, ""});
  }
  int failures = 0;
  std::ostringstream cases;
  for (const auto& rule : rules) {
    std::string body, out;
    for (const auto& d : r.findings) {
      if ((d.rule_id.empty() ? std::string("trainimg") : d.rule_id) != rule.id) continue;
      std::string where = d.location();
      if (!d.path.empty()) where += (where.empty() ? "" : " ") + d.path;
      std::string line = (where.empty() ? "" : where + ": ") + d.message;
      if (d.severity == Severity::Info) {
        out += line + "\n";
        continue;
      }
      body += "      <failure type=\"" + std::string(to_string(d.severity)) + "\" message=\"" +
              xml_escape(d.message) + "\">" + xml_escape(line + (d.hint.empty() ? "" : "\nhint: " + d.hint)) +
              "</failure>\n";
      ++failures;
    }
    // What policy hid stays out of the failures; --show-suppressed lists it
    // in the rule's output, with who hid it and why (as the text report).
    if (r.show_suppressed)
      for (const auto& sp : r.suppressed) {
        const Diagnostic& d = sp.finding;
        if ((d.rule_id.empty() ? std::string("trainimg") : d.rule_id) != rule.id) continue;
        std::string where = d.location().empty() ? d.path : d.location();
        out += "suppressed by " + sp.by + (sp.where.empty() ? "" : " (" + sp.where + ")") + ": " + sp.reason +
               ": " + (where.empty() ? "" : where + ": ") + std::string(to_string(d.severity)) + ": " +
               d.message + "\n";
      }
    cases << "    <testcase classname=\"trainimg." << xml_escape(r.kind) << "\" name=\""
          << xml_escape(rule.id) << "\"";
    if (body.empty() && out.empty()) {
      cases << "/>\n";
    } else {
      cases << ">\n" << body;
      if (!out.empty()) cases << "      <system-out>" << xml_escape(out) << "</system-out>\n";
      cases << "    </testcase>\n";
    }
  }
  std::string inputs;
  for (const auto& i : r.inputs) inputs += (inputs.empty() ? "" : " ") + i;
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<testsuites name=\"trainimg " << xml_escape(r.kind) << "\" tests=\"" << rules.size()
    << "\" failures=\"" << failures << "\">\n"
    << "  <testsuite name=\"" << xml_escape(r.kind + (inputs.empty() ? "" : ": " + inputs)) << "\" tests=\""
    << rules.size() << "\" failures=\"" << failures << "\" errors=\"0\">\n"
    << cases.str() << "  </testsuite>\n</testsuites>\n";
  return o.str();
}

}  // namespace trainimg
