// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/policy/policy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"

namespace trainimg::policy {
namespace {

namespace fs = std::filesystem;

std::vector<RuleInfo> catalogue() {
  RuleInfo a{"efa-apt-update", Severity::Error, "s", "f", "seed", "dockerfile"};
  RuleInfo b{"efa-version-pin", Severity::Warning, "s", "f", "seed", "dockerfile"};
  RuleInfo c{"mpi-second-install", Severity::Error, "s", "f", "seed", "dockerfile"};
  return {a, b, c};
}

Policy parse(const std::string& text) {
  return parse_policy(SourceFile(".trainimg.yaml", text), catalogue());
}

// The rendered first line of the error a config throws.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    const Diagnostic& d = e.diagnostic();
    return d.location() + ": " + d.message;
  }
  return "no error";
}

Diagnostic finding(const std::string& id, const std::string& file, int line, Severity s = Severity::Error) {
  Diagnostic d;
  d.rule_id = id;
  d.file = file;
  d.line = line;
  d.column = 1;
  d.severity = s;
  d.message = "message of " + id;
  return d;
}

Report report_of(std::vector<Diagnostic> findings) {
  Report r;
  r.kind = "lint";
  r.rules = catalogue();
  r.findings = std::move(findings);
  return r;
}

TEST(PolicyConfig, ReadsEveryKey) {
  Policy p = parse(
      "disable: [mpi-second-install]\n"
      "severity: {efa-version-pin: error}\n"
      "exclude-paths: ['vendor/**']\n"
      "fail-on: warning\n"
      "expect: {efa-installer: 1.50.0, cuda-driver: '13.2'}\n"
      "ngc-bases: [registry.example/pytorch-ngc]\n"
      "ignore:\n"
      "  - id: efa-apt-update\n"
      "    path: docker/*\n"
      "    until: 2031-01-31\n"
      "    reason: the base image refreshes its lists\n");
  ASSERT_EQ(p.disable.size(), 1u);
  EXPECT_EQ(p.disable[0].first, "mpi-second-install");
  EXPECT_EQ(p.disable[0].second.location(), ".trainimg.yaml:1:11");
  EXPECT_EQ(p.severity.at("efa-version-pin").first, Severity::Error);
  EXPECT_EQ(p.exclude_paths.at(0).first, "vendor/**");
  EXPECT_EQ(p.fail_on, FailOn::Warning);
  ASSERT_EQ(p.expect.size(), 2u);
  EXPECT_EQ(p.expect[1], (std::pair<std::string, std::string>{"cuda-driver", "13.2"}));
  EXPECT_EQ(p.ngc_bases.at(0), "registry.example/pytorch-ngc");
  ASSERT_EQ(p.ignores.size(), 1u);
  EXPECT_EQ(p.ignores[0].until, "2031-01-31");
  EXPECT_EQ(p.ignores[0].at.location(), ".trainimg.yaml:8:5");
}

TEST(PolicyConfig, UnknownKeyIsPositionedWithASuggestion) {
  EXPECT_EQ(error_of("fail-on: error\ndisabel: [efa-apt-update]\n"),
            ".trainimg.yaml:2:1: unknown key 'disabel' (did you mean 'disable'?)");
}

TEST(PolicyConfig, UnknownRuleIdIsPositionedWithASuggestion) {
  EXPECT_EQ(error_of("disable:\n  - efa-apt-updat\n"),
            ".trainimg.yaml:2:5: unknown rule id 'efa-apt-updat' (did you mean 'efa-apt-update'?)");
}

TEST(PolicyConfig, BadSeverityDateAndFailOnAreErrors) {
  EXPECT_EQ(error_of("severity: {efa-apt-update: fatal}\n"),
            ".trainimg.yaml:1:28: severity of efa-apt-update: expected error, warning or info, got 'fatal'");
  EXPECT_EQ(error_of("ignore: [{id: efa-apt-update, until: 2026-02-30, reason: r}]\n"),
            ".trainimg.yaml:1:38: until: '2026-02-30' is not a date YYYY-MM-DD");
  EXPECT_EQ(error_of("fail-on: sometimes\n"),
            ".trainimg.yaml:1:10: fail-on: expected error, warning or never, got 'sometimes'");
  EXPECT_EQ(error_of("expect: {libfabrik: 2.6.0}\n"),
            ".trainimg.yaml:1:10: unknown key 'libfabrik' in expect (did you mean 'libfabric'?)");
}

TEST(PolicyConfig, AnIgnoreNeedsAReason) {
  EXPECT_EQ(error_of("ignore:\n  - id: efa-apt-update\n"),
            ".trainimg.yaml:2:5: ignore of efa-apt-update without a reason");
}

TEST(PolicyConfig, MalformedYamlIsPositionedWithoutARecipeRule) {
  try {
    parse("disable: [efa-apt-update\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().file, ".trainimg.yaml");
    EXPECT_TRUE(e.diagnostic().rule_id.empty());
    EXPECT_GT(e.diagnostic().line, 0);
  }
}

TEST(PolicyConfig, FoundInAParentButNotAboveTheRepositoryRoot) {
  fs::path t = fs::temp_directory_path() / ("trainimg-policy-" + std::to_string(::getpid()));
  fs::create_directories(t / "repo/.git");
  fs::create_directories(t / "repo/a/b");
  std::ofstream(t / ".trainimg.yaml") << "disable: []\n";  // above the repository: never read
  EXPECT_EQ(find_config((t / "repo/a/b").string()), "");
  std::ofstream(t / "repo/a/.trainimg.yaml") << "disable: []\n";
  EXPECT_EQ(find_config((t / "repo/a/b").string()), (t / "repo/a/.trainimg.yaml").string());
  fs::remove_all(t);
}

TEST(PolicyApply, DisableIgnoreAndExcludeMoveFindingsToSuppressedWithTheReason) {
  Policy p = parse(
      "disable: [mpi-second-install]\n"
      "exclude-paths: [vendor]\n"
      "ignore: [{id: efa-apt-update, path: 'docker/*', reason: lists refreshed by the base}]\n");
  Report r = report_of(
      {finding("mpi-second-install", "Dockerfile", 3), finding("efa-apt-update", "docker/Dockerfile", 4),
       finding("efa-apt-update", "Dockerfile", 5), finding("efa-version-pin", "vendor/x/Dockerfile", 6)});
  apply_policy(r, p, "2026-12-04");
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].file, "Dockerfile");
  EXPECT_EQ(r.findings[0].line, 5);
  ASSERT_EQ(r.suppressed.size(), 3u);
  EXPECT_EQ(r.suppressed[0].by, "disable");
  EXPECT_EQ(r.suppressed[1].by, "ignore");
  EXPECT_EQ(r.suppressed[1].reason, "lists refreshed by the base");
  EXPECT_EQ(r.suppressed[1].where, ".trainimg.yaml:3:10");
  EXPECT_EQ(r.suppressed[2].by, "exclude-paths");
}

TEST(PolicyApply, SeverityOverrideChangesFindingsAtTheDefaultSeverityOnly) {
  Policy p = parse("severity: {efa-version-pin: error}\n");
  Report r = report_of({finding("efa-version-pin", "Dockerfile", 2, Severity::Warning),
                        finding("efa-version-pin", "Dockerfile", 3, Severity::Info)});
  apply_policy(r, p, "2026-12-04");
  EXPECT_EQ(r.findings[0].severity, Severity::Error);
  EXPECT_EQ(r.findings[1].severity, Severity::Info);
  EXPECT_EQ(r.rules[1].severity, Severity::Error);
}

TEST(PolicyApply, AnExpiredIgnoreHidesNothingAndIsAWarningAtTheEntry) {
  Policy p = parse("ignore:\n  - {id: efa-apt-update, until: 2026-12-03, reason: waiting for 1.51}\n");
  Report r = report_of({finding("efa-apt-update", "Dockerfile", 4)});
  apply_policy(r, p, "2026-12-04");
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[1].rule_id, "policy-ignore-expired");
  EXPECT_EQ(r.findings[1].severity, Severity::Warning);
  EXPECT_EQ(r.findings[1].location(), ".trainimg.yaml:2:5");
  EXPECT_EQ(r.findings[1].message,
            "the ignore of efa-apt-update expired on 2026-12-03 (reason: waiting for 1.51): its findings are "
            "reported again");
  EXPECT_EQ(r.rules.back().id, "policy-ignore-expired");
}

TEST(PolicyApply, AnIgnoreHoldsThroughItsUntilDay) {
  Policy p = parse("ignore: [{id: efa-apt-update, until: 2026-12-04, reason: r}]\n");
  Report r = report_of({finding("efa-apt-update", "Dockerfile", 4)});
  apply_policy(r, p, "2026-12-04");
  EXPECT_TRUE(r.findings.empty());
}

TEST(Baseline, FingerprintSurvivesALineShiftButNotAnotherLine) {
  SourceFile a("Dockerfile", "FROM x\nRUN apt-get install -y efa\n");
  SourceFile b("Dockerfile", "FROM x\n# a comment\n\nRUN apt-get install -y efa\n");
  Sources sa{{"Dockerfile", &a}}, sb{{"Dockerfile", &b}};
  Diagnostic d1 = finding("efa-apt-update", "Dockerfile", 2);
  d1.message = "no apt-get update before line 2";
  Diagnostic d2 = finding("efa-apt-update", "Dockerfile", 4);
  d2.message = "no apt-get update before line 4";
  EXPECT_EQ(fingerprint(d1, &sa), fingerprint(d2, &sb));
  Diagnostic other = finding("efa-apt-update", "Dockerfile", 1);
  other.message = d1.message;
  EXPECT_NE(fingerprint(d1, &sa), fingerprint(other, &sa));
}

TEST(Baseline, WrittenThenAppliedSplitsNewUnchangedAndAbsent) {
  Report before =
      report_of({finding("efa-apt-update", "Dockerfile", 2), finding("mpi-second-install", "Dockerfile", 5)});
  fs::path f = fs::temp_directory_path() / ("trainimg-baseline-" + std::to_string(::getpid()) + ".json");
  std::ofstream(f) << baseline_json(before);
  EXPECT_EQ(json_schema_of(f.string()), kBaselineSchema);
  Baseline b = read_baseline(f.string());
  ASSERT_EQ(b.entries.size(), 2u);
  Report now =
      report_of({finding("efa-apt-update", "Dockerfile", 2), finding("efa-version-pin", "Dockerfile", 7)});
  apply_baseline(now, b);
  ASSERT_EQ(now.findings.size(), 1u);
  EXPECT_EQ(now.findings[0].rule_id, "efa-version-pin");
  ASSERT_EQ(now.suppressed.size(), 1u);
  EXPECT_EQ(now.suppressed[0].by, "baseline");
  ASSERT_TRUE(now.baseline);
  ASSERT_EQ(now.baseline->absent.size(), 1u);
  EXPECT_EQ(now.baseline->absent[0].rule_id, "mpi-second-install");
  fs::remove(f);
}

TEST(Baseline, AnotherSchemaIsRefused) {
  fs::path f = fs::temp_directory_path() / ("trainimg-baseline-" + std::to_string(::getpid()) + "-host.json");
  std::ofstream(f) << "{\"schema\": \"trainimg.host/v1\"}\n";
  EXPECT_EQ(json_schema_of(f.string()), "trainimg.host/v1");
  EXPECT_THROW(read_baseline(f.string()), Error);
  fs::remove(f);
}

}  // namespace
}  // namespace trainimg::policy
