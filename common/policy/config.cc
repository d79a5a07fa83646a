// SPDX-License-Identifier: GPL-3.0-or-later
// `.trainimg.yaml`: found, read and validated with positions, as recipes are
// (common/yaml_schema.h parses and suggests).
#include <yaml-cpp/yaml.h>

#include <ctime>
#include <filesystem>
#include <set>

#include "common/error.h"
#include "common/policy/policy.h"
#include "common/version.h"
#include "common/yaml_schema.h"

namespace trainimg::policy {

namespace fs = std::filesystem;

std::string Place::location() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string find_config(const std::string& dir) {
  std::error_code ec;
  fs::path d = fs::absolute(dir, ec);
  if (ec) return {};
  d = d.lexically_normal();
  while (true) {
    fs::path c = d / kConfigName;
    if (fs::is_regular_file(c, ec)) return c.string();
    if (fs::exists(d / ".git", ec)) return {};
    if (!d.has_parent_path() || d.parent_path() == d) return {};
    d = d.parent_path();
  }
}

namespace {

const std::vector<Field>& top_fields() {
  static const std::vector<Field> k = {
      {"disable", FieldKind::ScalarList},       {"severity", FieldKind::NameMap},
      {"exclude-paths", FieldKind::ScalarList}, {"fail-on", FieldKind::Scalar},
      {"expect", FieldKind::NameMap},           {"ngc-bases", FieldKind::ScalarList},
      {"ignore", FieldKind::ObjectList},
  };
  return k;
}

const std::vector<Field>& ignore_fields() {
  static const std::vector<Field> k = {{"id", FieldKind::Scalar},
                                       {"path", FieldKind::Scalar},
                                       {"until", FieldKind::Scalar},
                                       {"reason", FieldKind::Scalar}};
  return k;
}

const std::vector<Field>& expect_fields() {
  static const std::vector<Field> k = {{"efa-installer", FieldKind::Scalar},
                                       {"libfabric", FieldKind::Scalar},
                                       {"aws-ofi-nccl", FieldKind::Scalar},
                                       {"cuda-driver", FieldKind::Scalar}};
  return k;
}

std::string names(const std::vector<Field>& fields) {
  std::string out;
  for (const auto& f : fields) out += (out.empty() ? "" : ", ") + std::string(f.key);
  return out;
}

bool is_date(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (s[i] < '0' || s[i] > '9') return false;
  int y = std::stoi(s.substr(0, 4)), m = std::stoi(s.substr(5, 2)), d = std::stoi(s.substr(8, 2));
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1 || d > kDays[m - 1]) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return !(m == 2 && d == 29 && !leap);
}

// Reads one config, throwing at the first problem.
class Reader {
 public:
  Reader(const SourceFile& src, const std::vector<RuleInfo>& catalogue) : src_(src) {
    for (const auto& r : catalogue) ids_.push_back({r.id, FieldKind::Scalar});
    for (const auto& r : policy_rules()) ids_.push_back({r.id, FieldKind::Scalar});
  }

  Policy read() {
    Policy p;
    p.file = src_.name();
    YAML::Node root;
    try {
      root = parse_yaml(src_);
    } catch (const Error& e) {
      Diagnostic d = e.diagnostic();  // parse_yaml(src_) gives it no rule id
      d.hint =
          "fix the YAML syntax at this position; docs/policy.md shows a complete " + std::string(kConfigName);
      throw Error(d);
    }
    if (!root || root.IsNull()) return p;
    if (!root.IsMap()) fail(root, "expected a mapping of keys (disable, severity, ignore, …)");
    for (const auto& kv : root) {
      std::string key = scalar(kv.first, "a key");
      const YAML::Node& v = kv.second;
      if (key == "disable") {
        for (const auto& n : list(v, key)) p.disable.emplace_back(rule_id(n), place(n));
      } else if (key == "severity") {
        for (const auto& e : map(v, key)) {
          std::string id = rule_id(e.first);
          std::string s = scalar(e.second, "a severity");
          auto sev = parse_severity(s);
          if (!sev)
            fail(e.second, "severity of " + id + ": expected error, warning or info, got '" + s + "'");
          p.severity[id] = {*sev, place(e.first)};
        }
      } else if (key == "exclude-paths") {
        for (const auto& n : list(v, key)) p.exclude_paths.emplace_back(scalar(n, "a glob"), place(n));
      } else if (key == "fail-on") {
        std::string s = scalar(v, "error, warning or never");
        if (s == "error")
          p.fail_on = FailOn::Error;
        else if (s == "warning")
          p.fail_on = FailOn::Warning;
        else if (s == "never")
          p.fail_on = FailOn::Never;
        else
          fail(v, "fail-on: expected error, warning or never, got '" + s + "'");
      } else if (key == "expect") {
        for (const auto& e : map(v, key)) {
          std::string k = scalar(e.first, "a key");
          if (!find_field(expect_fields(), k))
            fail(e.first, "unknown key '" + k + "' in expect" + did_you_mean(k, expect_fields()),
                 "expect: takes " + names(expect_fields()));
          std::string val = scalar(e.second, "a version");
          if (!looks_like_version(val)) fail(e.second, "'" + val + "' is not a version for " + k);
          p.expect.emplace_back(k, val);
        }
      } else if (key == "ngc-bases") {
        for (const auto& n : list(v, key)) p.ngc_bases.push_back(scalar(n, "an image prefix"));
      } else if (key == "ignore") {
        for (const auto& n : list(v, key)) p.ignores.push_back(ignore(n));
      } else {
        fail(kv.first, "unknown key '" + key + "'" + did_you_mean(key, top_fields()),
             "the keys are " + names(top_fields()) + " (docs/policy.md)");
      }
    }
    return p;
  }

 private:
  Place place(const YAML::Node& n) const {
    return {src_.name(), n.Mark().is_null() ? 0 : n.Mark().line + 1,
            n.Mark().is_null() ? 0 : n.Mark().column + 1};
  }

  [[noreturn]] void fail(const YAML::Node& n, std::string message, std::string hint = {}) const {
    Diagnostic d;
    d.file = src_.name();
    Place at = place(n);
    d.line = at.line;
    d.column = at.column;
    d.message = std::move(message);
    d.hint = hint.empty() ? "docs/policy.md shows a complete " + std::string(kConfigName) : std::move(hint);
    if (d.line > 0) {
      d.source_line = std::string(src_.line_text(d.line));
      d.length = n.IsScalar() ? std::max<int>(1, static_cast<int>(n.Scalar().size())) : 1;
    }
    throw Error(d);
  }

  std::string scalar(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, "expected " + what);
    return n.Scalar();
  }

  std::vector<YAML::Node> list(const YAML::Node& n, const std::string& key) const {
    if (n.IsNull()) return {};
    if (!n.IsSequence()) fail(n, key + ": expected a list");
    return {n.begin(), n.end()};
  }

  std::vector<std::pair<YAML::Node, YAML::Node>> map(const YAML::Node& n, const std::string& key) const {
    std::vector<std::pair<YAML::Node, YAML::Node>> out;
    if (n.IsNull()) return out;
    if (!n.IsMap()) fail(n, key + ": expected a mapping");
    for (const auto& kv : n) out.emplace_back(kv.first, kv.second);
    return out;
  }

  std::string rule_id(const YAML::Node& n) const {
    std::string id = scalar(n, "a rule id");
    if (!find_field(ids_, id))
      fail(n, "unknown rule id '" + id + "'" + did_you_mean(id, ids_),
           "`trainimg rules` lists every rule id");
    return id;
  }

  Ignore ignore(const YAML::Node& n) const {
    if (!n.IsMap()) fail(n, "ignore: expected a mapping {id, path, until, reason}");
    Ignore ig;
    ig.at = place(n);
    if (ig.at.line > 0) ig.line_text = std::string(src_.line_text(ig.at.line));
    bool has_id = false;
    for (const auto& kv : n) {
      std::string k = scalar(kv.first, "a key");
      if (k == "id") {
        ig.id = rule_id(kv.second);
        has_id = true;
      } else if (k == "path") {
        ig.path = scalar(kv.second, "a glob");
      } else if (k == "until") {
        ig.until = scalar(kv.second, "a date YYYY-MM-DD");
        if (!is_date(ig.until)) fail(kv.second, "until: '" + ig.until + "' is not a date YYYY-MM-DD");
      } else if (k == "reason") {
        ig.reason = scalar(kv.second, "the reason");
      } else {
        fail(kv.first, "unknown key '" + k + "' in ignore" + did_you_mean(k, ignore_fields()),
             "an ignore entry takes " + names(ignore_fields()));
      }
    }
    if (!has_id) fail(n, "ignore entry without an id");
    if (ig.reason.empty())
      fail(n, "ignore of " + ig.id + " without a reason", "say why the finding is accepted: reason: …");
    return ig;
  }

  const SourceFile& src_;
  std::vector<Field> ids_;  // keys view the catalogue's strings
};

}  // namespace

Policy parse_policy(const SourceFile& src, const std::vector<RuleInfo>& catalogue) {
  Policy p = Reader(src, catalogue).read();
  fs::path root = fs::path(src.name()).parent_path();
  p.root = root.empty() ? "." : root.string();
  return p;
}

Policy load_policy(const std::string& path, const std::vector<RuleInfo>& catalogue) {
  SourceFile src = SourceFile::read(path);
  return parse_policy(src, catalogue);
}

std::string today_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace trainimg::policy
