// SPDX-License-Identifier: GPL-3.0-or-later
// Version strings as the EFA stack writes them: "1.50.0", "2.6.0amzn1.0",
// "1.21.1-1", "1:2.6.0-1", "4.1.7", "13.4.1", "595.91.07".
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace trainimg {

/// dpkg ordering (epoch, upstream, revision; '~' sorts before everything).
/// Returns <0, 0, >0.
int compare_versions(std::string_view a, std::string_view b);

/// The release a package version names: epoch and Debian/RPM revision
/// ("-1", "-1.amzn2") dropped, and a vendor suffix glued to the last number
/// ("2.6.0amzn1.0" -> "2.6.0") dropped. "1.21.1-1" -> "1.21.1".
std::string release_of(std::string_view v);

/// Whether two version strings name the same release (release_of equal).
bool same_release(std::string_view a, std::string_view b);

/// True when `v` looks like a version: starts with a digit, only
/// [0-9A-Za-z.+~:-] after it.
bool looks_like_version(std::string_view v);

}  // namespace trainimg
