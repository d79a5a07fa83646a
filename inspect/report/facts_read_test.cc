// SPDX-License-Identifier: GPL-3.0-or-later
// facts_from_json: facts_json read back, losslessly, and nothing else: what
// a sidecar in a world-writable directory may hold instead is one Error.
// (That the rules judge read-back facts as the original ones, for every
// NGC-like scenario, kind and host stack: rules/every_kind_test.cc.)
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "common/error.h"
#include "inspect/facts/ngc_fixture_test_util.h"
#include "inspect/inspect.h"

namespace trainimg::inspect {
namespace {

using J = nlohmann::ordered_json;

// Facts with every field set, those the rules do not read included.
facts::ImageFacts everything_set() {
  facts::ImageFacts f = testing::facts_of(testing::ngc_image(), testing::FixtureKind::DockerArchive);
  f.digest = "sha256:" + std::string(64, 'a');
  f.dpkg = {{"libfabric1-aws", "2.6.0amzn1.0"}, {"openmpi40-aws", "4.1.7-1"}};
  f.elf_notes = {{"/opt/x/lib/libbad.so", "sha256:" + std::string(64, 'b'), "truncated section headers"}};
  f.truncated = "stopped after 1000000 entries";
  f.removed = {{"/opt/amazon/efa/lib/libfabric.so.1", "sha256:c", "sha256:d"}};
  f.mpi_votes.push_back({"OPAL_PREFIX", "/opt/amazon/openmpi", "/opt/amazon/openmpi"});
  return f;
}

std::string message_of(const J& j) {
  try {
    facts_from_json(j, "img.sqsh.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().file, "img.sqsh.json");
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.diagnostic().message;
  }
  return "no error";
}

TEST(FactsFromJson, GivesBackEveryFieldOfNgcLikeFacts) {
  facts::ImageFacts f = everything_set();
  J j = facts_json(f);
  // Through text, as a sidecar keeps it.
  facts::ImageFacts back = facts_from_json(J::parse(j.dump(2)), "x");
  EXPECT_EQ(facts_json(back), j);
  EXPECT_EQ(back.reference, f.reference);
  EXPECT_EQ(back.digest, f.digest);
  EXPECT_EQ(back.layers, f.layers);
  EXPECT_EQ(back.env, f.env);
  EXPECT_EQ(back.env_from, f.env_from);
  ASSERT_TRUE(back.installer);
  EXPECT_EQ(back.installer->packages, f.installer->packages);
  EXPECT_EQ(back.dpkg, f.dpkg);
  ASSERT_EQ(back.elf_notes.size(), 1u);
  EXPECT_EQ(back.elf_notes[0].error, "truncated section headers");
  EXPECT_EQ(back.truncated, f.truncated);
  ASSERT_EQ(back.plugins.size(), f.plugins.size());
  for (size_t i = 0; i < f.plugins.size(); ++i) {
    EXPECT_EQ(back.plugins[i].net_apis, f.plugins[i].net_apis);
    EXPECT_EQ(back.plugins[i].exports, f.plugins[i].exports);
    EXPECT_EQ(back.plugins[i].aws_ofi_nccl, f.plugins[i].aws_ofi_nccl);
  }
  ASSERT_EQ(back.loader.size(), f.loader.size());
  for (size_t i = 0; i < f.loader.size(); ++i) EXPECT_EQ(back.loader[i].requester, f.loader[i].requester);
  ASSERT_TRUE(back.nccl_plugin);
  EXPECT_EQ(back.nccl_plugin->resolved, f.nccl_plugin->resolved);
  EXPECT_EQ(back.mpi_votes.size(), f.mpi_votes.size());
  EXPECT_FALSE(f.cudas.empty());
  EXPECT_EQ(back.cudas[0].compat_libs, f.cudas[0].compat_libs);
}

TEST(FactsFromJson, EmptyFactsRoundTrip) {
  facts::ImageFacts f;
  J j = facts_json(f);
  EXPECT_EQ(j["facts_version"], kFactsVersion);
  EXPECT_EQ(facts_json(facts_from_json(j, "x")), j);
}

TEST(FactsFromJson, FactsOfAnOlderTrainimgOrAnotherVersionAreRefused) {
  J j = facts_json(everything_set());
  J old = j;
  for (const char* k : {"dpkg", "elf_notes", "truncated", "facts_version"}) old.erase(k);
  EXPECT_EQ(message_of(old), "facts: no facts_version (written by a trainimg older than facts_version 1)");
  j["facts_version"] = 2;
  EXPECT_EQ(message_of(j), "facts/facts_version: 2 is not 1 (written by another trainimg version)");
  j["facts_version"] = "1";
  EXPECT_EQ(message_of(j), "facts/facts_version: string is not 1 (written by another trainimg version)");
}

TEST(FactsFromJson, EachMalformedKeyIsOneLineNamingIt) {
  const J good = facts_json(everything_set());
  auto with = [&](const std::function<void(J&)>& edit) {
    J j = good;
    edit(j);
    return message_of(j);
  };
  EXPECT_EQ(message_of(J::array()), "facts: expected an object, not array");
  EXPECT_EQ(with([](J& j) { j.erase("cuda"); }), "facts: no \"cuda\"");
  EXPECT_EQ(with([](J& j) { j["x\ny"] = 1; }), "facts: unexpected key \"x\\ny\"");
  EXPECT_EQ(with([](J& j) { j["loader_order"][0]["candidates"] = "x"; }),
            "facts/loader_order/0/candidates: expected an array, not string");
  EXPECT_EQ(with([](J& j) { j["aws_ofi_nccl"][0]["net_plugin_apis"][1] = 8.5; }),
            "facts/aws_ofi_nccl/0/net_plugin_apis/1: expected a small whole number, not that number");
  EXPECT_EQ(with([](J& j) { j["aws_ofi_nccl"][0]["net_plugin_apis"][0] = -1; }),
            "facts/aws_ofi_nccl/0/net_plugin_apis/0: expected a small whole number, not that number");
  EXPECT_EQ(with([](J& j) { j["libfabric"][0]["efa_build"] = "yes"; }),
            "facts/libfabric/0/efa_build: expected true or false, not string");
  EXPECT_EQ(with([](J& j) { j["efa_installer"]["packages"][0].erase("arch"); }),
            "facts/efa_installer/packages/0: no \"arch\"");
  EXPECT_EQ(with([](J& j) { j["dpkg"]["libfabric1-aws"] = J::array(); }),
            "facts/dpkg/\"libfabric1-aws\": expected a string, not array");
  // Derived values must agree with the facts they derive from.
  EXPECT_EQ(with([](J& j) { j["loader_order"][0]["selected"] = "/usr/lib/libfabric.so.1"; }),
            "facts/loader_order: is not what these facts give (edited, or not written by facts_json)");
  EXPECT_EQ(
      with([](J& j) { j["mpi_selection"]["ambiguous"] = !j["mpi_selection"]["ambiguous"].get<bool>(); }),
      "facts/mpi_selection: is not what these facts give (edited, or not written by facts_json)");
  EXPECT_EQ(with([](J& j) { j["nccl_net_plugin"]["NCCL_NET_PLUGIN"] = "aws-ofi"; }),
            "facts/nccl_net_plugin: is not what these facts give (edited, or not written by facts_json)");
  // Not what facts_json writes for an unknown version: "" instead of null.
  EXPECT_EQ(with([](J& j) { j["nccl"][0]["version_from"] = ""; }),
            "facts/nccl: is not what these facts give (edited, or not written by facts_json)");
  // A deep nest where a string belongs is refused by its type, not walked.
  EXPECT_EQ(
      with([](J& j) { j["image"]["kind"] = J::parse(std::string(100000, '[') + std::string(100000, ']')); }),
      "facts/image/kind: expected a string, not array");
}

// Every value of the facts replaced by a value of each other type: either
// one Error, or facts that serialize to exactly the edited input.
TEST(FactsFromJson, EveryValueOfAnotherTypeIsAnErrorOrReadExactly) {
  const J good = facts_json(everything_set());
  const J flat = good.flatten();
  const J others[] = {J(), J(0), J(-3), J(1.5), J(true), J("s"), J::array(), J::object(), J::array({1})};
  size_t refused = 0, read = 0;
  for (const auto& [pointer, value] : flat.items()) {
    for (const J& o : others) {
      J j = good;
      j[J::json_pointer(pointer)] = o;
      try {
        EXPECT_EQ(facts_json(facts_from_json(j, "x")), j) << pointer << " = " << o.dump();
        ++read;
      } catch (const Error&) {
        ++refused;
      }
    }
  }
  RecordProperty("refused", static_cast<int>(refused));
  RecordProperty("read", static_cast<int>(read));
  EXPECT_GT(refused, 1000u);  // 1156 refused, 158 read
  EXPECT_GT(read, 0u);        // a null version is "unknown", a bool another bool
}

TEST(FactsFromJson, ReportFromFactsJudgesWithoutTheImage) {
  facts::ImageFacts f = everything_set();
  ImageExpectations e = parse_expect("efa-installer=1.47.0");
  Report a = make_report(f, e), b = report_from_facts_json(facts_json(f), e, "x");
  ASSERT_EQ(a.findings.size(), b.findings.size());
  for (size_t i = 0; i < a.findings.size(); ++i) {
    EXPECT_EQ(a.findings[i].rule_id, b.findings[i].rule_id);
    EXPECT_EQ(a.findings[i].message, b.findings[i].message);
  }
  EXPECT_EQ(a.facts, b.facts);
  EXPECT_EQ(a.notes, b.notes);
}

}  // namespace
}  // namespace trainimg::inspect
