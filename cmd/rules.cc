// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg rules [--format text|json]: every rule of every checker.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cmd/command.h"
#include "cmd/rule_catalogue.h"
#include "common/report.h"

namespace trainimg::cmd {

void setup_rules(CLI::App& sub, Runner& run) {
  auto format = std::make_shared<std::string>("text");
  sub.add_option("--format", *format, "text or json")->check(CLI::IsMember({"text", "json"}));
  run = [format] {
    auto rules = rule_catalogue();
    if (*format == "json") {
      nlohmann::ordered_json j;
      j["schema"] = "trainimg.rules/v1";
      j["rules"] = nlohmann::ordered_json::array();
      for (const auto& r : rules)
        j["rules"].push_back({{"id", r.id},
                              {"domain", r.domain},
                              {"severity", std::string(to_string(r.severity))},
                              {"summary", r.summary},
                              {"fix", r.fix},
                              {"seed", r.seed}});
      std::cout << j.dump(2) << "\n";
      return int(kExitOk);
    }
    for (const auto& r : rules) {
      std::cout << r.id << "  [" << r.domain << ", " << to_string(r.severity) << "]\n"
                << "  fires when: " << r.summary << "\n"
                << "  fix:        " << r.fix << "\n"
                << "  source:     " << r.seed << "\n\n";
    }
    return int(kExitOk);
  };
}

}  // namespace trainimg::cmd
