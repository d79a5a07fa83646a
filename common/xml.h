// SPDX-License-Identifier: GPL-3.0-or-later
// XML text escaping for the JUnit renderers (common/report_junit.cc and the
// fleet report).
#pragma once

#include <string>

namespace trainimg {

/// `s` with & < > " ' escaped; control characters other than tab, newline
/// and carriage return (not allowed in XML 1.0) become '?'.
std::string xml_escape(const std::string& s);

}  // namespace trainimg
