// SPDX-License-Identifier: GPL-3.0-or-later
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/error.h"
#include "recipes/dockerfile/dockerfile.h"

namespace trainimg::recipes {
namespace {
using ::testing::ElementsAre;

Dockerfile parse(const std::string& text) {
  return parse_dockerfile(SourceFile("Dockerfile", text));
}

// The positioned one-line message a malformed Dockerfile produces.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string pos(const std::string& text, Span s) {
  auto lc = SourceFile("x", text).line_col(s.offset);
  return std::to_string(lc.line) + ":" + std::to_string(lc.column);
}

std::vector<std::string> programs(const Instruction& in) {
  std::vector<std::string> out;
  for (const auto& c : in.script.commands) out.push_back(std::string(to_string(c.op)) + c.program());
  return out;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Parser, SeedReferenceDockerfile) {
  std::string text = read(std::string(TRAINIMG_SOURCE_DIR) + "/tests/fixtures/seed002/reference.Dockerfile");
  Dockerfile df = parse(text);
  ASSERT_EQ(df.stages.size(), 1u);
  const Stage& s = df.stages[0];
  EXPECT_EQ(s.base, "nvcr.io/nvidia/pytorch:26.08-py3");
  EXPECT_TRUE(s.in_final_image);
  std::vector<std::string> kw;
  for (const auto& in : s.instructions) kw.push_back(in.keyword);
  EXPECT_THAT(kw, ElementsAre("FROM", "ARG", "ARG", "RUN", "ENV", "ENV", "RUN"));
  const Instruction& run = s.instructions[3];
  EXPECT_EQ(run.line, 7);
  EXPECT_EQ(run.end_line, 14);
  EXPECT_THAT(programs(run), ElementsAre("apt-get", "&&apt-get", "&&cd", "&&curl", "&&tar", "&&cd",
                                         "&&efa_installer.sh", "&&cd", "&&rm"));
  const Command& inst = run.script.commands[6];
  EXPECT_EQ(pos(text, inst.argv[0].span), "13:5");
  EXPECT_EQ(inst.argv.back().text, "--no-verify");
  const Command& curl = run.script.commands[3];
  EXPECT_EQ(curl.argv[3].text, "https://efa-installer.amazonaws.com/aws-efa-installer-1.50.0.tar.gz");
  EXPECT_EQ(curl.argv[3].raw,
            "https://efa-installer.amazonaws.com/aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz");
  const Instruction& deepep = s.instructions[6];
  EXPECT_EQ(deepep.script.commands[3].assignments[0].text, "DISABLE_AGGRESSIVE_PTX_INSTRS=1");
  EXPECT_EQ(deepep.script.commands[2].argv[2].text, "94a9f8f6b146c07d97ec58f67cd6d303296d6098");
  EXPECT_EQ(s.instructions[4].pairs[0].value,
            "/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}");
}

TEST(Parser, VariableForms) {
  Dockerfile df = parse(
      "FROM x\n"
      "ARG A=1\n"
      "ARG EMPTY=\n"
      "ARG UNSET\n"
      "ENV B=${A:-9} C=${UNSET:-d} D=${EMPTY:-e} E=${A:+plus} F=${UNSET:+plus} G=$NOPE H=\\$A I='$A'\n");
  std::vector<std::string> got;
  for (const auto& kv : df.stages[0].instructions[4].pairs) got.push_back(kv.key + "=" + kv.value);
  EXPECT_THAT(got, ElementsAre("B=1", "C=d", "D=e", "E=plus", "F=", "G=$NOPE", "H=$A", "I=$A"));
  EXPECT_TRUE(df.stages[0].instructions[4].pairs[5].unresolved);
}

TEST(Parser, PatternFormsResolveInEnvAndFrom) {
  Dockerfile df = parse(
      "ARG CUDA_VERSION=12.4.1\n"
      "FROM nvidia/cuda:${CUDA_VERSION%.*}-devel\n"
      "ARG CUDA_VERSION\n"
      "ENV CUDA_MAJOR=${CUDA_VERSION%%.*} TAG=cu${CUDA_VERSION//./} BASE=${NGC_VERSION%%-*}\n"
      "RUN echo ${CUDA_VERSION%%.*} ${CUDA_VERSION/./_}\n");
  EXPECT_EQ(df.stages[0].base, "nvidia/cuda:12.4-devel");
  const auto& env = df.stages[0].instructions[2].pairs;
  EXPECT_EQ(env[0].value, "12");
  EXPECT_EQ(env[1].value, "cu1241");
  EXPECT_EQ(env[2].value, "${NGC_VERSION%%-*}");  // base image ENV: unknown
  EXPECT_TRUE(env[2].unresolved);
  const auto& argv = df.stages[0].instructions[3].script.commands[0].argv;
  EXPECT_EQ(argv[1].text, "12");
  EXPECT_EQ(argv[2].text, "${CUDA_VERSION/./_}");  // dash has no ${V/x/y}
  EXPECT_TRUE(argv[2].unresolved);
}

// Found by fuzz_dockerfile (tests/fuzz/regressions/dockerfile/): "${VAR:}"
// has no operator after the colon and threw std::out_of_range.
TEST(Parser, ColonWithoutOperatorIsKeptAsWritten) {
  Dockerfile df = parse("FROM x\nARG A=1\nENV B=${A:} C=${A:}x\n");
  ASSERT_EQ(df.stages[0].instructions[2].pairs.size(), 2u);
  EXPECT_EQ(df.stages[0].instructions[2].pairs[0].value, "${A:}");
  EXPECT_TRUE(df.stages[0].instructions[2].pairs[0].unresolved);
  EXPECT_EQ(df.stages[0].instructions[2].pairs[1].value, "${A:}x");
}

TEST(Parser, EnvIsSimultaneousAndLegacyFormTakesTheRestOfTheLine) {
  Dockerfile df = parse("FROM x\nENV A=1\nENV A=2 B=$A\nENV MSG hello  world\n");
  EXPECT_EQ(df.stages[0].instructions[2].pairs[1].value, "1");
  EXPECT_EQ(df.stages[0].instructions[3].pairs[0].value, "hello  world");
}

TEST(Parser, GlobalArgsReachFromAndRedeclaredArgs) {
  Dockerfile df =
      parse("ARG BASE=nvcr.io/nvidia/pytorch:26.08-py3\nARG V=1.50.0\nFROM ${BASE}\nARG V\nRUN echo $V\n");
  EXPECT_EQ(df.stages[0].base, "nvcr.io/nvidia/pytorch:26.08-py3");
  EXPECT_EQ(df.stages[0].instructions[2].script.commands[0].argv[1].text, "1.50.0");
  // Without re-declaration a global ARG is not visible in the stage.
  Dockerfile df2 = parse("ARG V=1.50.0\nFROM x\nRUN echo $V\n");
  EXPECT_EQ(df2.stages[0].instructions[1].script.commands[0].argv[1].text, "$V");
}

TEST(Parser, StagesInTheFinalImage) {
  Dockerfile df = parse(
      "FROM ubuntu:24.04 AS Build\n"
      "ENV X=from-build\n"
      "FROM nvcr.io/nvidia/pytorch:26.08-py3 AS base\n"
      "ENV Y=1\n"
      "FROM base\n"
      "COPY --from=build /out /opt/out\n"
      "RUN echo $Y\n");
  ASSERT_EQ(df.stages.size(), 3u);
  EXPECT_EQ(df.stages[0].name, "build");
  EXPECT_FALSE(df.stages[0].in_final_image);
  EXPECT_TRUE(df.stages[1].in_final_image);
  EXPECT_TRUE(df.stages[2].in_final_image);
  EXPECT_EQ(df.stages[2].base_stage, 1);
  EXPECT_EQ(df.root_image(df.final_stage()), "nvcr.io/nvidia/pytorch:26.08-py3");
  EXPECT_EQ(df.stages[2].instructions[1].flag("from")->value, "build");
  EXPECT_EQ(df.stages[2].instructions[2].script.commands[0].argv[1].text, "1");  // ENV inherited
}

// BuildKit's dispatchState of a stage built FROM a stage starts from the
// base's state (its ARG values are in that environment) and buildArgs; a
// stage FROM an image starts empty.
TEST(Parser, StageBuiltFromAStageKeepsItsArgValues) {
  Dockerfile df = parse("FROM x AS base\nARG V=1.50.0\nFROM base\nARG V\nRUN echo $V\nFROM x\nRUN echo $V\n");
  EXPECT_EQ(df.stages[1].instructions[2].script.commands[0].argv[1].text, "1.50.0");
  EXPECT_EQ(df.stages[2].instructions[1].script.commands[0].argv[1].text, "$V");
}

TEST(Parser, CommentsAndBlankLinesInsideContinuations) {
  std::string text =
      "FROM x\n"
      "RUN apt-get update \\\n"
      "# a comment inside the continuation\n"
      "\n"
      "    && ./efa_installer.sh -y\n";
  Dockerfile df = parse(text);
  const auto& run = df.stages[0].instructions[1];
  EXPECT_THAT(programs(run), ElementsAre("apt-get", "&&efa_installer.sh"));
  EXPECT_EQ(pos(text, run.script.commands[1].argv[0].span), "5:8");
  EXPECT_EQ(run.end_line, 5);
}

TEST(Parser, EscapeDirectiveBacktick) {
  std::string text = "# escape=`\n# syntax=docker/dockerfile:1\nFROM x\nRUN echo a `\n  && echo b\n";
  Dockerfile df = parse(text);
  EXPECT_EQ(df.escape, '`');
  EXPECT_EQ(df.directives.at("syntax"), "docker/dockerfile:1");
  EXPECT_THAT(programs(df.stages[0].instructions[1]), ElementsAre("echo", "&&echo"));
}

TEST(Parser, DirectiveAfterAnInstructionIsAComment) {
  Dockerfile df = parse("FROM x\n# escape=`\nRUN echo a \\\n  b\n");
  EXPECT_EQ(df.escape, '\\');
  EXPECT_EQ(df.stages[0].instructions[1].script.commands[0].argv.size(), 3u);
}

TEST(Parser, HeredocScript) {
  std::string text =
      "FROM x\n"
      "RUN <<EOF\n"
      "apt-get update\n"
      "./efa_installer.sh -y\n"
      "EOF\n"
      "ENV A=1\n";
  Dockerfile df = parse(text);
  const auto& run = df.stages[0].instructions[1];
  EXPECT_THAT(programs(run), ElementsAre("apt-get", ";efa_installer.sh"));
  EXPECT_EQ(pos(text, run.script.commands[1].argv[0].span), "4:1");
  EXPECT_EQ(run.end_line, 5);
  EXPECT_EQ(df.stages[0].instructions[2].line, 6);
  ASSERT_EQ(run.heredocs.size(), 1u);
  EXPECT_EQ(run.heredocs[0].body, "apt-get update\n./efa_installer.sh -y\n");
}

TEST(Parser, HeredocFedToCatIsDataAndToBashIsScript) {
  std::string text =
      "FROM x\n"
      "RUN cat <<'EOF' > /etc/x.conf && bash <<-SH\n"
      "./efa_installer.sh in a file body\n"
      "EOF\n"
      "\tapt-get update\n"
      "\tSH\n"
      "COPY <<EOF /a\n"
      "hello\n"
      "EOF\n";
  Dockerfile df = parse(text);
  const auto& run = df.stages[0].instructions[1];
  EXPECT_THAT(programs(run), ElementsAre("cat", "&&bash", "apt-get"));
  EXPECT_EQ(run.script.commands[2].depth, 1);
  EXPECT_EQ(run.script.commands[2].parent, 1);
  EXPECT_EQ(pos(text, run.script.commands[2].argv[0].span), "5:2");
  EXPECT_EQ(df.stages[0].instructions[2].heredocs[0].body, "hello\n");
}

TEST(Parser, ExecFormAndShDashC) {
  std::string text = "FROM x\nRUN [\"sh\", \"-c\", \"apt-get update && ./efa_installer.sh -y\"]\n";
  Dockerfile df = parse(text);
  const auto& run = df.stages[0].instructions[1];
  EXPECT_TRUE(run.json_form);
  EXPECT_THAT(programs(run), ElementsAre("sh", "apt-get", "&&efa_installer.sh"));
  EXPECT_EQ(run.script.commands[2].parent, 0);
  EXPECT_EQ(pos(text, run.script.commands[2].argv[0].span), "2:37");
}

TEST(Parser, ShellFormThatStartsWithABracketIsNotJson) {
  Dockerfile df =
      parse("FROM x\nRUN [ -f /x ] && echo yes\nRUN [ \"$(uname -m)\" = \"x86_64\" ] && echo yes\n");
  EXPECT_FALSE(df.stages[0].instructions[1].json_form);
  EXPECT_THAT(programs(df.stages[0].instructions[1]), ElementsAre("[", "&&echo"));
  // `[` then a string, but no JSON: was refused as a malformed exec form.
  EXPECT_FALSE(df.stages[0].instructions[2].json_form);
  EXPECT_THAT(programs(df.stages[0].instructions[2]), ElementsAre("[", "&&echo"));
}

TEST(Parser, CrLfLineEndings) {
  Dockerfile df = parse("FROM x\r\nRUN a \\\r\n && b\r\n");
  EXPECT_THAT(programs(df.stages[0].instructions[1]), ElementsAre("a", "&&b"));
}

TEST(Parser, PragmaOnTheLineBefore) {
  Dockerfile df = parse(
      "FROM x\n# trainimg: ignore=efa-apt-update, nccl-net-plugin\nRUN a\n# trainimg: ignore=x\n\nRUN b\n");
  EXPECT_THAT(df.stages[0].instructions[1].ignore, ElementsAre("efa-apt-update", "nccl-net-plugin"));
  EXPECT_TRUE(df.stages[0].instructions[2].ignore.empty());  // a blank line in between
}

// BuildKit takes every word of ARG as a name (issue 13): `# why` declares two
// more ARGs, it is not a comment and not an error.
TEST(Parser, ArgWithTrailingWordsDeclaresThemAsArgs) {
  Dockerfile df = parse("FROM x\nARG V=1.50.0    # the host version\nRUN echo $V\n");
  const Instruction& arg = df.stages[0].instructions[1];
  ASSERT_EQ(arg.pairs.size(), 5u);
  EXPECT_EQ(arg.pairs[0].key, "V");
  EXPECT_EQ(arg.pairs[0].value, "1.50.0");
  EXPECT_EQ(arg.pairs[1].key, "#");
  EXPECT_FALSE(arg.pairs[1].has_value);
  EXPECT_EQ(pos("FROM x\nARG V=1.50.0    # the host version\n", arg.pairs[1].key_span), "2:17");
  EXPECT_EQ(df.stages[0].instructions[2].script.commands[0].argv[1].text, "1.50.0");
}

// Under `# syntax=` a custom frontend may define instructions: skipped with a note.
TEST(Parser, UnknownInstructionUnderASyntaxDirectiveIsSkippedWithANote) {
  Dockerfile df = parse(
      "# syntax = edrevo/dockerfile-plus\n\nINCLUDE+ base/Dockerfile.common \\\n  more\nFROM x\nRUN a\n");
  ASSERT_EQ(df.notes.size(), 1u);
  EXPECT_EQ(df.notes[0].line, 3);
  EXPECT_EQ(df.notes[0].column, 1);
  EXPECT_EQ(df.notes[0].severity, Severity::Info);
  EXPECT_NE(df.notes[0].message.find("unknown instruction 'INCLUDE+' skipped"), std::string::npos);
  ASSERT_EQ(df.stages.size(), 1u);
  EXPECT_EQ(df.stages[0].instructions.size(), 2u);
}

// Issue 25: `INCLUDE+ FILE` (which holds the FROM) then ENV: the frontend
// decides, so no refusal; what follows is a stage whose base cannot be told.
TEST(Parser, InstructionAfterACustomInstructionBeforeAnyFromOpensAStageOnAnUnknownBase) {
  Dockerfile df =
      parse("# syntax = edrevo/dockerfile-plus\nINCLUDE+ base/Dockerfile.common\nENV A=1\nRUN a\n");
  ASSERT_EQ(df.stages.size(), 1u);
  EXPECT_TRUE(df.stages[0].base_unknown);
  EXPECT_EQ(df.root_image(df.final_stage()), "");
  ASSERT_EQ(df.stages[0].instructions.size(), 2u);
  EXPECT_EQ(df.stages[0].instructions[0].keyword, "ENV");
  ASSERT_EQ(df.notes.size(), 2u);
  EXPECT_EQ(std::to_string(df.notes[1].line) + ":" + std::to_string(df.notes[1].column), "3:1");
  EXPECT_EQ(df.notes[1].message,
            "ENV comes before any FROM of this file: the 'INCLUDE+' before it may bring one (the frontend "
            "decides); the base cannot be told, what follows is linted on an unknown base");
  // Without the directive BuildKit refuses the unknown instruction, as before.
  EXPECT_EQ(error_of("INCLUDE+ base/Dockerfile.common\nENV A=1\n"),
            "Dockerfile:1:1: unknown instruction 'INCLUDE+'");
  // And without a custom instruction, ENV before FROM stays an error.
  EXPECT_EQ(error_of("# syntax = docker/dockerfile:1\nENV A=1\nFROM x\n"),
            "Dockerfile:2:1: ENV before the first FROM");
}

// BuildKit (parseMaybeJSON): text json.Unmarshal refuses is shell form.
TEST(Parser, InvalidJsonIsShellForm) {
  Dockerfile df = parse(
      "FROM x\nCMD [\"a\", 'b']\nENTRYPOINT [\"x\"] y\nRUN [\"a\" \"b\"]\nCMD [\"echo\", \"no close\"\n");
  const auto& in = df.stages[0].instructions;
  for (size_t k = 1; k < in.size(); ++k) EXPECT_FALSE(in[k].json_form) << k;
  ASSERT_EQ(in[1].args.size(), 2u);
  EXPECT_EQ(in[1].args[1].text, "b]");
  ASSERT_EQ(in[3].script.commands.size(), 1u);
  EXPECT_EQ(in[3].script.commands[0].argv[0].text, "[a");
}

TEST(Parser, ByteOrderMarkIsDropped) {
  Dockerfile df = parse(
      "\xEF\xBB\xBF"
      "FROM x\nRUN a\n");
  ASSERT_EQ(df.stages.size(), 1u);
  EXPECT_EQ(df.stages[0].base, "x");
  EXPECT_EQ(df.stages[0].instructions[1].line, 2);
}

// BuildKit's continuation pattern: an escape character before the last one
// escapes it, so the line ends there.
TEST(Parser, EscapedEscapeAtTheEndOfALineJoinsNothing) {
  Dockerfile df = parse("FROM x\nRUN echo a\\\\\nUSER root\nRUN b \\\n  c\n");
  const auto& in = df.stages[0].instructions;
  ASSERT_EQ(in.size(), 4u);
  EXPECT_EQ(in[1].raw_args, "echo a\\\\");
  EXPECT_EQ(in[2].keyword, "USER");
  EXPECT_THAT(programs(in[3]), ElementsAre("b"));
  EXPECT_EQ(in[3].script.commands[0].argv[1].text, "c");
}

TEST(Parser, EscapeDirectiveWithoutValueIsAComment) {
  Dockerfile df = parse("# escape=\nFROM x\nRUN a \\\n b\n");
  EXPECT_EQ(df.escape, '\\');
  EXPECT_EQ(df.directives.count("escape"), 0u);
  EXPECT_EQ(df.stages[0].instructions.size(), 2u);
}

// BuildKit's heredoc words: `[N]<<[-]NAME` as a whole word; NAME is the rest
// of the word. A `<<` inside a word or followed by a blank opens nothing.
TEST(Parser, HeredocNameIsTheRestOfTheWord) {
  std::string text = "FROM x\nRUN cat <<END-OF-FILE > /x\nhello\nEND-OF-FILE\nRUN cat<<EOF\nUSER root\n";
  Dockerfile df = parse(text);
  const auto& in = df.stages[0].instructions;
  ASSERT_EQ(in.size(), 4u);
  ASSERT_EQ(in[1].heredocs.size(), 1u);
  EXPECT_EQ(in[1].heredocs[0].delimiter, "END-OF-FILE");
  EXPECT_EQ(in[1].heredocs[0].body, "hello\n");
  EXPECT_EQ(in[1].end_line, 4);
  EXPECT_TRUE(in[2].heredocs.empty());
  EXPECT_EQ(in[3].keyword, "USER");
  EXPECT_EQ(in[3].line, 6);
}

TEST(Parser, OnbuildTriggerReadsItsHeredoc) {
  Dockerfile df = parse("FROM x\nONBUILD RUN <<EOF\necho hi\nEOF\nCMD [\"x\"]\n");
  const auto& in = df.stages[0].instructions;
  ASSERT_EQ(in.size(), 3u);
  ASSERT_EQ(in[1].heredocs.size(), 1u);
  EXPECT_EQ(in[1].heredocs[0].body, "echo hi\n");
  EXPECT_EQ(in[2].keyword, "CMD");
  EXPECT_EQ(in[2].line, 5);
}

TEST(Parser, LabelLegacyFormTakesTheRestOfTheLine) {
  Dockerfile df = parse("FROM x\nLABEL maintainer Jane Doe <jane@example.org>\n");
  const auto& kv = df.stages[0].instructions[1].pairs;
  ASSERT_EQ(kv.size(), 1u);
  EXPECT_EQ(kv[0].key, "maintainer");
  EXPECT_EQ(kv[0].value, "Jane Doe <jane@example.org>");
}

// BuildKit never expands these words, so their quotes are not its business.
TEST(Parser, QuotesOfInstructionsThatRunLaterAreNotChecked) {
  Dockerfile df = parse("FROM x\nMAINTAINER John O'Brien\nCMD echo \"no end\nHEALTHCHECK CMD test 'x\n");
  EXPECT_EQ(df.stages[0].instructions.size(), 4u);
}

// SHELL ["cmd", …] / PowerShell: RUN is not POSIX shell and is not split; a
// stage built FROM that stage keeps its SHELL, a new image does not.
TEST(Parser, RunUnderCmdOrPowerShellIsNotSplit) {
  Dockerfile df = parse(
      "FROM w AS win\nSHELL [\"cmd\", \"/S\", \"/C\"]\nRUN echo don't\n"
      "FROM win\nRUN echo it's\nSHELL [\"C:\\\\Windows\\\\bin\\\\PowerShell.exe\", \"-Command\"]\nRUN "
      "Write-Host 'a''b\n"
      "FROM x\nRUN echo ok\n");
  EXPECT_TRUE(df.stages[0].instructions[2].script.commands.empty());
  EXPECT_TRUE(df.stages[1].instructions[1].script.commands.empty());
  EXPECT_TRUE(df.stages[1].instructions[3].script.commands.empty());
  EXPECT_THAT(programs(df.stages[2].instructions[1]), ElementsAre("echo"));
}

// A Windows base runs RUN with `cmd /S /C` when no SHELL says otherwise.
TEST(Parser, RunOnAWindowsImageIsNotSplit) {
  Dockerfile df = parse(
      "FROM mcr.microsoft.com/windows/servercore:ltsc2022 AS w\nRUN echo don't\n"
      "FROM python:3.13-windowsservercore-ltsc2022\nRUN echo it's\nSHELL [\"/bin/sh\", \"-c\"]\nRUN a && "
      "b\n");
  EXPECT_TRUE(df.stages[0].instructions[1].script.commands.empty());
  EXPECT_TRUE(df.stages[1].instructions[1].script.commands.empty());
  EXPECT_THAT(programs(df.stages[1].instructions[3]), ElementsAre("a", "&&b"));
}

// Found by probing what Docker builds: these were refused as unterminated quotes.
// The .NET Framework and full `windows` images and `--platform=windows/…` run
// RUN with cmd; SHELL python3 -c is not sh; `conda run … bash -c` is.
TEST(Parser, WindowsBasesAndNonShellShellsAreNotSplit) {
  Dockerfile df = parse(
      "FROM mcr.microsoft.com/dotnet/framework/sdk:4.8\nRUN setx /M PATH \"%PATH%;C:\\tools\\\"\n"
      "FROM mcr.microsoft.com/windows:ltsc2019\nRUN echo it's done\n"
      "FROM --platform=windows/amd64 mcr.microsoft.com/dotnet/sdk:8.0\nRUN echo it's done\n"
      "FROM python:3.12-slim\nSHELL [\"python3\", \"-c\"]\nRUN print('it\\'s')\n"
      "SHELL [\"conda\", \"run\", \"-n\", \"env\", \"/bin/bash\", \"-c\"]\nRUN a && b\n");
  EXPECT_TRUE(df.stages[0].instructions[1].script.commands.empty());
  EXPECT_TRUE(df.stages[1].instructions[1].script.commands.empty());
  EXPECT_TRUE(df.stages[2].instructions[1].script.commands.empty());
  EXPECT_TRUE(df.stages[3].instructions[2].script.commands.empty());
  EXPECT_THAT(programs(df.stages[3].instructions[4]), ElementsAre("a", "&&b"));
}

// BuildKit runs `RUN <<EOF` with the interpreter its `#!` names.
TEST(Parser, AHeredocScriptWithAnotherInterpretersShebangIsNotSplit) {
  Dockerfile df = parse(
      "FROM x\nRUN <<EOF\n#!/usr/bin/env python3\nprint('it\\'s')\nEOF\n"
      "RUN <<EOF\n#!/usr/bin/env -S bash -e\napt-get update\nEOF\n"
      "RUN <<EOF\n#!/bin/sh\napt-get update\nEOF\n");
  EXPECT_TRUE(df.stages[0].instructions[1].script.commands.empty());
  EXPECT_THAT(programs(df.stages[0].instructions[2]), ElementsAre("apt-get"));
  EXPECT_THAT(programs(df.stages[0].instructions[3]), ElementsAre("apt-get"));
}

// `$'…'` (bash, ksh, zsh, busybox sh, POSIX.1-2024 sh): `\'` does not end it;
// a `'` in a double-quoted `${V:-…}` is a plain character.
TEST(Parser, DollarSingleQuotesAndAQuoteInADoubleQuotedDefault) {
  std::string text =
      "FROM x\nRUN echo $'it\\'s' && bash -c \"echo \\$'a\\\\'b'\" && x=$(echo $'c\\'d')\n"
      "RUN echo \"${NAME:-it's}\" && ./efa_installer.sh -y\n";
  Dockerfile df = parse(text);
  const auto& run = df.stages[0].instructions[1];
  EXPECT_THAT(programs(run), ElementsAre("echo", "&&bash", "echo", "&&"));
  EXPECT_EQ(run.script.commands[0].argv[1].text, "it's");
  EXPECT_THAT(programs(df.stages[0].instructions[2]), ElementsAre("echo", "&&efa_installer.sh"));
  EXPECT_EQ(df.stages[0].instructions[2].script.commands[0].argv[1].text, "${NAME:-it's}");  // NAME unknown
  EXPECT_EQ(error_of("FROM x\nRUN echo $'it\\'s\n"), "Dockerfile:2:11: unterminated $'…' quote");
}

TEST(ParserErrors, EmptyFile) {
  EXPECT_EQ(error_of(""), "Dockerfile:1:1: empty Dockerfile: no instructions");
  EXPECT_EQ(error_of("# only a comment\n\n"), "Dockerfile:1:1: empty Dockerfile: no instructions");
}

TEST(ParserErrors, UnknownInstructionIsPositioned) {
  EXPECT_EQ(error_of("FROM x\n  RUNN echo\n"), "Dockerfile:2:3: unknown instruction 'RUNN'");
  // A continuation line that lost its backslash.
  EXPECT_EQ(error_of("FROM x\nRUN a\n && b\n"), "Dockerfile:3:2: unknown instruction '&&'");
}

TEST(ParserErrors, BlankArgOrEnvName) {
  EXPECT_EQ(error_of("FROM x\nARG =1\n"), "Dockerfile:2:5: ARG names can not be blank");
  EXPECT_EQ(error_of("FROM x\nENV A=1 # c\n"), "Dockerfile:2:9: ENV # has no '='");
}

TEST(ParserErrors, InstructionBeforeFrom) {
  EXPECT_EQ(error_of("ARG A=1\nRUN echo\nFROM x\n"), "Dockerfile:2:1: RUN before the first FROM");
  EXPECT_EQ(error_of("ARG A=1\n"), "Dockerfile:1:1: no FROM instruction");
}

TEST(ParserErrors, UnterminatedHeredoc) {
  EXPECT_EQ(error_of("FROM x\nRUN <<EOF\necho\n"),
            "Dockerfile:2:5: unterminated here-document: no line 'EOF' before the end of the file");
}

TEST(ParserErrors, UnterminatedQuote) {
  EXPECT_EQ(error_of("FROM x\nRUN echo 'abc \\\n  && true\n"), "Dockerfile:2:10: unterminated single quote");
  EXPECT_EQ(error_of("FROM x\nENV A=\"x\n"), "Dockerfile:2:7: unterminated double quote");
}

// BuildKit errors only on a JSON array that holds a non-string; what is not
// JSON at all is shell form (below).
TEST(ParserErrors, ExecFormWithANonString) {
  EXPECT_EQ(error_of("FROM x\nCMD [\"a\", 1]\n"),
            "Dockerfile:2:5: exec form (JSON array) holds a non-string (number)");
  EXPECT_EQ(error_of("FROM x\nRUN [\"a\", [\"b\"]]\n"),
            "Dockerfile:2:5: exec form (JSON array) holds a non-string (array)");
}

TEST(ParserErrors, FromWithoutImageAndBadEscape) {
  EXPECT_EQ(error_of("FROM\n"), "Dockerfile:1:1: FROM without an image");
  EXPECT_EQ(error_of("FROM x AS\n"), "Dockerfile:1:8: FROM takes IMAGE [AS NAME]");
  EXPECT_EQ(error_of("# escape=x\nFROM x\n"),
            "Dockerfile:1:1: invalid escape directive 'x': must be \\ or `");
}

}  // namespace
}  // namespace trainimg::recipes
