// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg rules [--format text|json|markdown] [--kind KIND]: every rule of
// every checker. The markdown form is what the README's and docs' rule
// tables hold, byte for byte (tests/rule_tables_test.cc).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cmd/cli/cli.h"
#include "cmd/command.h"
#include "common/report.h"

namespace trainimg::cmd {

void setup_rules(CLI::App& sub, Runner& run) {
  auto format = std::make_shared<std::string>("text");
  auto kind = std::make_shared<std::string>();
  sub.add_option("--format", *format, "text, json or markdown (the README/docs rule tables)")
      ->check(CLI::IsMember({"text", "json", "markdown"}));
  sub.add_option("--kind", *kind, "only the rules of one kind")->check(CLI::IsMember(rule_kinds()));
  run = [format, kind] {
    std::vector<RuleInfo> rules;
    for (auto& r : rule_catalogue())
      if (kind->empty() || r.kind == *kind) rules.push_back(std::move(r));
    if (*format == "markdown") {
      std::cout << rules_markdown(rules);
      return int(kExitOk);
    }
    if (*format == "json") {
      nlohmann::ordered_json j;
      j["schema"] = "trainimg.rules/v1";
      j["rules"] = nlohmann::ordered_json::array();
      // "domain" is the v1 name of "kind", kept for readers of v1.
      for (const auto& r : rules)
        j["rules"].push_back({{"id", r.id},
                              {"kind", r.kind},
                              {"domain", r.kind},
                              {"severity", std::string(to_string(r.severity))},
                              {"summary", r.summary},
                              {"fix", r.fix},
                              {"seed", r.seed},
                              {"docs", r.docs}});
      std::cout << j.dump(2) << "\n";
      return int(kExitOk);
    }
    for (const auto& r : rules) {
      std::cout << r.id << "  [" << r.kind << ", " << to_string(r.severity) << "]\n"
                << "  fires when: " << r.summary << "\n"
                << "  fix:        " << r.fix << "\n"
                << "  source:     " << r.seed << "\n"
                << "  docs:       " << r.docs << "\n\n";
    }
    return int(kExitOk);
  };
}

}  // namespace trainimg::cmd
