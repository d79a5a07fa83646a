// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <array>
#include <cctype>

#include "common/version.h"
#include "recipes/rules/rule.h"

namespace trainimg::recipes::rules {

std::string base_name(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

namespace {

bool is_shell(const std::string& p) {
  return p == "sh" || p == "bash" || p == "dash" || p == "zsh" || p == "ash" || p == "ksh";
}

// Options of a wrapper that take a value (`sudo -u root`, `nice -n 5`).
bool takes_value(const std::string& wrapper, const std::string& opt) {
  if (wrapper == "sudo")
    return opt == "-u" || opt == "-g" || opt == "-C" || opt == "-D" || opt == "-h" || opt == "-p";
  if (wrapper == "nice") return opt == "-n";
  if (wrapper == "env") return opt == "-u" || opt == "-C" || opt == "-S";
  if (wrapper == "stdbuf") return opt == "-i" || opt == "-o" || opt == "-e";
  return false;
}

}  // namespace

std::vector<const Word*> effective_argv(const Command& c) {
  std::vector<const Word*> v;
  for (const auto& w : c.argv) v.push_back(&w);
  static const std::array<std::string_view, 8> kWrappers = {"sudo", "env",   "exec", "command",
                                                            "nice", "nohup", "time", "stdbuf"};
  size_t i = 0;
  while (i < v.size()) {
    std::string p = base_name(v[i]->text);
    if (std::find(kWrappers.begin(), kWrappers.end(), p) != kWrappers.end()) {
      ++i;
      while (i < v.size()) {
        const std::string& w = v[i]->text;
        if (w == "--") {
          ++i;
          break;
        }
        if (w.size() > 1 && w[0] == '-') {
          i += takes_value(p, w) ? 2 : 1;
        } else if (p == "env" && w.find('=') != std::string::npos) {
          ++i;
        } else {
          break;
        }
      }
      continue;
    }
    if (is_shell(p)) {
      // `bash ./efa_installer.sh -y`: the script is what runs; `-c` is recursed by the splitter.
      size_t k = i + 1;
      while (k < v.size() && v[k]->text.size() > 1 && (v[k]->text[0] == '-' || v[k]->text[0] == '+')) {
        if (v[k]->text[0] == '-' && v[k]->text.find('c') != std::string::npos &&
            v[k]->text.rfind("--", 0) != 0)
          return {v.begin() + static_cast<long>(i), v.end()};
        k += v[k]->text.back() == 'o' ? 2 : 1;  // `-o opt`, `-euxo pipefail`
      }
      if (k < v.size()) {
        i = k;
        break;
      }
    }
    break;
  }
  return {v.begin() + static_cast<long>(std::min(i, v.size())), v.end()};
}

namespace {

// efa_installer.sh's getopt spec, read from the installer's public source
// (`getopt -o :dnuylkmg --long debug-packages,no-verify,uninstall,yes,
// skip-limit-conf,skip-kmod,minimal,enable-gdr`), plus the long options later
// releases add (domain.md §3).
struct LongOpt {
  std::string_view name;
  bool value;
};
constexpr std::array<LongOpt, 14> kLong = {{{"debug-packages", false},
                                            {"no-verify", false},
                                            {"uninstall", false},
                                            {"yes", false},
                                            {"skip-limit-conf", false},
                                            {"skip-kmod", false},
                                            {"minimal", false},
                                            {"enable-gdr", false},
                                            {"mpi", true},
                                            {"skip-mpi", false},
                                            {"skip-rdma-core", false},
                                            {"disable-ngc", false},
                                            {"enable-ngc", false},
                                            {"build-ngc", false}}};

std::string short_to_long(char c) {
  switch (c) {
    case 'd': return "debug-packages";
    case 'n': return "no-verify";
    case 'u': return "uninstall";
    case 'y': return "yes";
    case 'l': return "skip-limit-conf";
    case 'k': return "skip-kmod";
    case 'm': return "minimal";
    case 'g': return "enable-gdr";
  }
  return {};
}

std::map<std::string, const Word*> installer_options(const std::vector<const Word*>& argv) {
  std::map<std::string, const Word*> out;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& w = argv[i]->text;
    if (w == "--") break;
    if (w.rfind("--", 0) == 0) {
      std::string name = w.substr(2);
      size_t eq = name.find('=');
      if (eq != std::string::npos) name = name.substr(0, eq);
      // getopt_long: an exact name, or a prefix of exactly one name.
      const LongOpt* hit = nullptr;
      int prefixes = 0;
      for (const auto& o : kLong) {
        if (o.name == name) {
          hit = &o;
          prefixes = 1;
          break;
        }
        if (!name.empty() && o.name.substr(0, name.size()) == name) {
          hit = &o;
          ++prefixes;
        }
      }
      if (hit && prefixes == 1) {
        out.emplace(std::string(hit->name), argv[i]);
        if (hit->value && eq == std::string::npos) ++i;
      }
    } else if (w.size() > 1 && w[0] == '-') {
      for (size_t k = 1; k < w.size(); ++k) {
        std::string l = short_to_long(w[k]);
        if (!l.empty()) out.emplace(l, argv[i]);
      }
    }
  }
  return out;
}

}  // namespace

std::vector<InstallerRun> installer_runs(const Context& c) {
  std::vector<InstallerRun> out;
  for (const Instruction* in : c.final_image) {
    if (in->keyword != "RUN") continue;
    for (size_t k = 0; k < in->script.commands.size(); ++k) {
      auto argv = effective_argv(in->script.commands[k]);
      if (argv.empty() || base_name(argv[0]->text) != "efa_installer.sh") continue;
      InstallerRun r;
      r.run = in;
      r.command = k;
      r.argv = argv;
      r.options = installer_options(argv);
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::optional<std::string> installer_tarball_version(const std::string& word) {
  constexpr std::string_view kPrefix = "aws-efa-installer-";
  constexpr std::string_view kSuffix = ".tar.gz";
  // A URL's query or fragment is cut off; a `#`/`?` inside an unresolved
  // `${VAR#v}` is not one.
  size_t cut = 0;
  for (int depth = 0; cut < word.size(); ++cut) {
    if (word.compare(cut, 2, "${") == 0)
      ++depth;
    else if (word[cut] == '}' && depth > 0)
      --depth;
    else if (depth == 0 && (word[cut] == '?' || word[cut] == '#'))
      break;
  }
  std::string b = base_name(word.substr(0, cut));
  if (b.size() <= kPrefix.size() + kSuffix.size() || b.compare(0, kPrefix.size(), kPrefix) != 0 ||
      b.compare(b.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
    return std::nullopt;
  return b.substr(kPrefix.size(), b.size() - kPrefix.size() - kSuffix.size());
}

std::optional<std::string> installer_version(const Context& c) {
  for (const Instruction* in : c.final_image)
    for (const auto& cmd : in->script.commands)
      for (const Word& w : cmd.argv)
        if (auto v = installer_tarball_version(w.text); v && looks_like_version(*v)) return v;
  return std::nullopt;
}

namespace {

bool names_efa(const std::string& s) {
  return s.find("/opt/amazon/efa") != std::string::npos || s.find("ofi-nccl") != std::string::npos ||
         s.find("libnccl-net-ofi") != std::string::npos || s.find("FI_PROVIDER=efa") != std::string::npos;
}

}  // namespace

bool shows_efa(const Context& c) {
  if (!installer_runs(c).empty()) return true;
  if (c.df.root_image(c.df.final_stage()).find(".dkr.ecr.") != std::string::npos &&
      c.df.root_image(c.df.final_stage()).rfind("763104351884.", 0) == 0)
    return true;  // AWS Deep Learning Containers' account
  for (const Instruction* in : c.final_image) {
    for (const KeyValue& kv : in->pairs)
      if (in->keyword == "ENV" && (names_efa(kv.value) || (kv.key == "FI_PROVIDER" && kv.value == "efa")))
        return true;
    for (const auto& cmd : in->script.commands) {
      for (const Word& w : cmd.assignments)
        if (names_efa(w.text)) return true;
      for (const Word& w : cmd.argv)
        if (names_efa(w.text)) return true;
    }
  }
  return false;
}

namespace {

std::string lowered(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

bool names_gpu(const std::string& text) {
  std::string s = lowered(text);
  return s.find("nccl") != std::string::npos || s.find("/usr/local/cuda") != std::string::npos ||
         s.find("--with-cuda") != std::string::npos || s.find("cudnn") != std::string::npos;
}

bool gpu_package(const std::string& name) {
  std::string n = lowered(name);
  for (std::string_view p : {"cuda", "libcuda", "libcudnn", "libnccl", "nccl", "nvidia-cuda", "tensorrt"})
    if (n.rfind(p, 0) == 0) return true;
  return false;
}

bool gpu_env_key(const std::string& key) {
  for (std::string_view p : {"CUDA_", "NCCL_", "NVIDIA_", "TORCH_CUDA_ARCH_LIST"})
    if (key.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace

bool shows_gpu_stack(const Context& c) {
  std::string root = lowered(c.df.root_image(c.df.final_stage()));
  if (c.ngc_base || root.rfind("nvcr.io/nvidia/", 0) == 0 || root.find("cuda") != std::string::npos)
    return true;
  if (root.find(".dkr.ecr.") != std::string::npos && root.rfind("763104351884.", 0) == 0)
    return true;  // AWS Deep Learning Containers' account
  std::vector<const Command*> installer;
  for (const InstallerRun& r : installer_runs(c)) installer.push_back(&r.run->script.commands[r.command]);
  for (const Instruction* in : c.final_image) {
    if (in->keyword == "ENV")
      for (const KeyValue& kv : in->pairs)
        if (gpu_env_key(kv.key) || names_gpu(kv.value)) return true;
    for (const auto& cmd : in->script.commands) {
      for (const auto& pkg : installed_packages(cmd))
        if (gpu_package(pkg.first)) return true;
      if (std::find(installer.begin(), installer.end(), &cmd) != installer.end()) continue;
      for (const Word& w : cmd.assignments)
        if (names_gpu(w.text)) return true;
      for (const Word& w : cmd.argv)
        if (names_gpu(w.text)) return true;
    }
  }
  return false;
}

int final_index(const Context& c, const Instruction* in) {
  auto it = std::find(c.final_image.begin(), c.final_image.end(), in);
  return it == c.final_image.end() ? -1 : static_cast<int>(it - c.final_image.begin());
}

namespace {

// A list's parameter expansions as they expand where the variable is set (an
// inherited list is: the reason to write them): `${V:+WORD}` and `${V+WORD}`
// are WORD, `${V:-W}`, `${V-W}`, `${V:=W}`, `${V=W}`, `${V:?W}`, `${V?W}` are
// ${V}. Anything else is kept as written.
std::string as_if_set(const std::string& v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t close = v.compare(i, 2, "${") == 0 ? closing_brace(v, i + 1, '\\') : std::string::npos;
    if (close != std::string::npos) --close;  // at the `}`
    if (close == std::string::npos) {
      out += v[i++];
      continue;
    }
    std::string body = v.substr(i + 2, close - i - 2);
    size_t n = 0;
    while (n < body.size() && (std::isalnum(static_cast<unsigned char>(body[n])) || body[n] == '_')) ++n;
    std::string name = body.substr(0, n), op = body.substr(n, body[n] == ':' ? 2 : 1);
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || op.empty())
      out += v.substr(i, close + 1 - i);
    else if (op == ":+" || op == "+")
      out += as_if_set(body.substr(n + op.size()));
    else if (op == ":-" || op == "-" || op == ":=" || op == "=" || op == ":?" || op == "?")
      out += "${" + name + "}";
    else
      out += v.substr(i, close + 1 - i);
    i = close + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> split_path_list(const std::string& v) {
  const std::string flat = as_if_set(v);
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < flat.size(); ++i) {
    if (flat.compare(i, 2, "${") == 0) {  // a colon inside braces does not split
      size_t close = closing_brace(flat, i + 1, '\\');
      if (close != std::string::npos) {
        --close;  // at the `}`
        cur += flat.substr(i, close + 1 - i);
        i = close;
        continue;
      }
    }
    if (flat[i] == ':') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += flat[i];
    }
  }
  out.push_back(std::move(cur));
  return out;
}

const Word* rm_of(const Instruction& in, const std::string& path) {
  for (const Command& cmd : in.script.commands) {
    auto argv = effective_argv(cmd);
    if (argv.empty() || base_name(argv[0]->text) != "rm") continue;
    for (size_t i = 1; i < argv.size(); ++i) {
      std::string w = argv[i]->text;
      if (w.size() > 2 && w.ends_with("/*")) w.resize(w.size() - 2);  // the directory's contents
      if (!w.empty() && w[0] != '-' && path_under(path, w)) return argv[i];
    }
  }
  return nullptr;
}

bool path_under(std::string path, std::string dir) {
  auto strip = [](std::string& s) {
    while (s.size() > 1 && s.back() == '/') s.pop_back();
  };
  strip(path);
  strip(dir);
  if (path == dir) return true;
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

std::vector<std::pair<std::string, const Word*>> installed_packages(const Command& c) {
  std::vector<std::pair<std::string, const Word*>> out;
  auto argv = effective_argv(c);
  if (argv.empty()) return out;
  std::string p = base_name(argv[0]->text);
  if (p != "apt-get" && p != "apt" && p != "yum" && p != "dnf" && p != "microdnf") return out;
  size_t i = 1;
  // Options before the sub-command (`apt-get -y -q install`): -o takes a value.
  while (i < argv.size() && argv[i]->text.size() > 1 && argv[i]->text[0] == '-')
    i += argv[i]->text == "-o" ? 2 : 1;
  if (i >= argv.size() || argv[i]->text != "install") return out;
  for (++i; i < argv.size(); ++i) {
    const std::string& w = argv[i]->text;
    if (w == "-o" || w == "-t" || w == "--target-release") {
      ++i;
      continue;
    }
    if (w.empty() || w[0] == '-') continue;
    std::string name = w.substr(0, w.find_first_of("=:"));
    out.emplace_back(name, argv[i]);
  }
  return out;
}

}  // namespace trainimg::recipes::rules
