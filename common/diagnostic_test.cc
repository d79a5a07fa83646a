// SPDX-License-Identifier: GPL-3.0-or-later
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/report.h"
#include "common/source_file.h"

namespace trainimg {

TEST(SourceFile, MapsOffsetsToOneBasedLineAndColumn) {
  SourceFile f("x", "ab\ncd\r\n\nlast");
  EXPECT_EQ(f.line_col(0).line, 1);
  EXPECT_EQ(f.line_col(4).line, 2);
  EXPECT_EQ(f.line_col(4).column, 2);
  EXPECT_EQ(f.line_text(2), "cd");
  EXPECT_EQ(f.line_text(4), "last");
  EXPECT_EQ(f.line_count(), 4);
}

TEST(SourceFile, AByteOrderMarkIsNotPartOfLineOne) {
  SourceFile f("Dockerfile",
               "\xEF\xBB\xBF"
               "FROM x AS\nRUN a\n");
  EXPECT_EQ(f.line_col(3).column, 1);   // the F
  EXPECT_EQ(f.line_col(10).column, 8);  // the A of AS
  EXPECT_EQ(f.line_col(0).column, 1);   // inside the mark: the line's start
  EXPECT_EQ(f.line_text(1), "FROM x AS");
  EXPECT_EQ(f.line_col(13).line, 2);
  EXPECT_EQ(f.line_col(13).column, 1);
}

TEST(RenderText, CompilerStyleWithCaretRangeAndHint) {
  Report r;
  r.kind = "lint";
  Diagnostic d;
  d.file = "Dockerfile";
  d.line = 3;
  d.column = 5;
  d.length = 3;
  d.rule_id = "demo-rule";
  d.message = "bad thing";
  d.hint = "do the good thing";
  d.source_line = "RUN foo bar";
  r.findings.push_back(d);
  EXPECT_EQ(render_text(r),
            "Dockerfile:3:5: error: bad thing [demo-rule]\n"
            "RUN foo bar\n"
            "    ^~~\n"
            "hint: do the good thing\n"
            "1 error, 0 warnings, 0 notes\n");
}

TEST(ExitCode, FollowsFailOnThreshold) {
  Report r;
  Diagnostic w;
  w.severity = Severity::Warning;
  r.findings.push_back(w);
  EXPECT_EQ(exit_code(r, FailOn::Error), kExitOk);
  EXPECT_EQ(exit_code(r, FailOn::Warning), kExitFindings);
  EXPECT_EQ(exit_code(r, FailOn::Never), kExitOk);
}

TEST(RenderJson, VersionedSchemaAndSummary) {
  Report r;
  r.kind = "lint";
  r.inputs = {"Dockerfile"};
  Diagnostic d;
  d.rule_id = "x";
  r.findings.push_back(d);
  auto j = render_json(r);
  EXPECT_EQ(j["schema"], "trainimg.lint/v1");
  EXPECT_EQ(j["summary"]["errors"], 1);
  EXPECT_EQ(j["findings"][0]["rule"], "x");
}

TEST(RenderSarif, HasVersionRulesAndResults) {
  Report r;
  r.kind = "lint";
  r.rules.push_back(RuleInfo{"x", Severity::Warning, "s", "f", "seed", "dockerfile"});
  Diagnostic d;
  d.rule_id = "x";
  d.severity = Severity::Warning;
  d.file = "Dockerfile";
  d.line = 2;
  d.column = 1;
  r.findings.push_back(d);
  auto j = render_sarif(r);
  EXPECT_EQ(j["version"], "2.1.0");
  EXPECT_EQ(j["runs"][0]["tool"]["driver"]["rules"][0]["id"], "x");
  EXPECT_EQ(j["runs"][0]["results"][0]["level"], "warning");
  EXPECT_EQ(j["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"], 2);
}

TEST(RenderJunit, OneTestcasePerRuleFailureForFinding) {
  Report r;
  r.kind = "inspect";
  r.rules.push_back(RuleInfo{"a", Severity::Error, "s", "f", "", "image"});
  r.rules.push_back(RuleInfo{"b", Severity::Error, "s", "f", "", "image"});
  Diagnostic d;
  d.rule_id = "b";
  d.message = "x < y";
  r.findings.push_back(d);
  std::string x = render_junit(r);
  EXPECT_NE(x.find("<testcase classname=\"trainimg.inspect\" name=\"a\"/>"), std::string::npos);
  EXPECT_NE(x.find("<failure type=\"error\" message=\"x &lt; y\">"), std::string::npos);
  EXPECT_NE(x.find("tests=\"2\" failures=\"1\""), std::string::npos);
}

TEST(RenderJunit, SuppressedFindingsAreNoFailuresAndShownOnlyWhenAsked) {
  Report r;
  r.kind = "lint";
  r.rules.push_back(RuleInfo{"a", Severity::Error, "s", "f", "", "lint"});
  Diagnostic d;
  d.rule_id = "a";
  d.file = "Dockerfile";
  d.line = 3;
  d.message = "hidden";
  r.suppressed.push_back(Suppressed{d, "ignore", "vendor image, fixed upstream", ".trainimg.yaml:4:5"});
  std::string x = render_junit(r);
  EXPECT_NE(x.find("tests=\"1\" failures=\"0\""), std::string::npos) << x;
  EXPECT_EQ(x.find("hidden"), std::string::npos) << x;
  r.show_suppressed = true;
  x = render_junit(r);
  EXPECT_NE(x.find("tests=\"1\" failures=\"0\""), std::string::npos) << x;
  EXPECT_NE(x.find("<system-out>suppressed by ignore (.trainimg.yaml:4:5): vendor image, fixed upstream: "
                   "Dockerfile:3"),
            std::string::npos)
      << x;
}

TEST(AtomicFile, UncommittedLeavesNothingBehind) {
  auto dir = std::filesystem::temp_directory_path() / ("atomic-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto target = (dir / "out.txt").string();
  {
    AtomicFile f(target);
    f.write("partial");
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  {
    AtomicFile f(target);
    f.write("done");
    f.commit();
  }
  std::ifstream in(target);
  std::string s;
  in >> s;
  EXPECT_EQ(s, "done");
  EXPECT_THROW(AtomicFile(target, /*replace=*/false), Error);
  std::filesystem::remove_all(dir);
}

}  // namespace trainimg
