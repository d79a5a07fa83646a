// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/host/probes.h"

#include <sys/stat.h>

#include <cerrno>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "common/atomic_file.h"
#include "common/error.h"
#include "inspect/host/parsers.h"

namespace trainimg::host {

namespace {

using Json = nlohmann::ordered_json;
using K = ProbeSpec::Kind;

ProbeSpec exec(std::string id, std::vector<std::string> argv, std::vector<std::string> fallbacks = {},
               bool nonzero_ok = false) {
  ProbeSpec s;
  s.id = std::move(id);
  for (const auto& a : argv) s.command += (s.command.empty() ? "" : " ") + a;
  s.argv = std::move(argv);
  s.fallbacks = std::move(fallbacks);
  s.nonzero_ok = nonzero_ok;
  return s;
}

ProbeSpec builtin(std::string id, K kind, std::string command, std::string path = {}) {
  ProbeSpec s;
  s.id = std::move(id);
  s.kind = kind;
  s.command = std::move(command);
  s.path = std::move(path);
  return s;
}

bool has(const std::vector<std::string>& v, std::string_view x) {
  for (const auto& e : v)
    if (e == x) return true;
  return false;
}

bool says_missing(const ProbeRecord& r) {
  return r.error.find("No such file") != std::string::npos ||
         r.error.find("cannot access") != std::string::npos;
}

// Sets a profile field to a parsed answer and, when there is one, the
// record's `key` to it.
void keep(ProbeRecord& r, const char* key, std::optional<std::string>& field,
          std::optional<std::string> value) {
  field = std::move(value);
  if (field) r.parsed[key] = *field;
}

// What each probe contributes. Runs only for ok probes (and the failed
// ones that still answer a question, see below); a thrown Error becomes the
// record's parse_error.
using Interpreter = std::function<void(ProbeRecord&, HostProfile&, const std::string& id)>;

const std::map<std::string, Interpreter>& interpreters() {
  static const std::map<std::string, Interpreter> kTable = {
      {"hostname.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         if (auto h = first_line(r.output)) p.hostname = *h;
         r.parsed["hostname"] = p.hostname;
       }},
      {"nvidia-smi.csv",
       [](ProbeRecord& r, HostProfile& p, const std::string& id) {
         p.gpus = parse_nvidia_smi_csv(r.output, id);
         p.gpu_count = static_cast<int>(p.gpus.size());
         if (!p.gpus.empty()) {
           p.gpu_model = p.gpus.front().name;
           p.driver_version = p.gpus.front().driver_version;
         }
         r.parsed["gpu_count"] = *p.gpu_count;
         if (p.gpu_model) r.parsed["gpu_model"] = *p.gpu_model;
         if (p.driver_version) r.parsed["driver_version"] = *p.driver_version;
       }},
      {"nvidia-smi.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         keep(r, "cuda_driver_version", p.cuda_driver_version, parse_nvidia_smi_cuda_version(r.output));
       }},
      {"fabricmanager.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         keep(r, "fabric_manager", p.fabric_manager, first_line(r.output));
       }},
      {"modinfo-efa.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         keep(r, "efa_driver_version", p.efa_driver_version, parse_modinfo_version(r.output));
       }},
      {"efa_installed_packages",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         auto m = parse_efa_manifest(r.output);
         keep(r, "efa_installer_version", p.efa_installer_version, m.installer_version);
         keep(r, "libfabric_version", p.libfabric_version, m.libfabric);
         keep(r, "ofi_nccl_version", p.ofi_nccl_version, m.ofi_nccl);
         keep(r, "openmpi4_version", p.openmpi4_version, m.openmpi4);
         keep(r, "openmpi5_version", p.openmpi5_version, m.openmpi5);
         keep(r, "pmix_version", p.pmix_version, m.pmix);
         r.parsed["packages"] = m.packages;
       }},
      {"infiniband.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         auto d = parse_infiniband(r.output);
         p.infiniband_devices = d.all;
         p.efa_device_count = d.counted ? *d.counted : static_cast<int>(d.efa.size());
         r.parsed["efa"] = d.efa;
         if (d.counted) r.parsed["rdmap_count"] = *d.counted;
         r.parsed["connectx"] = d.connectx;
         r.parsed["other"] = d.other;
       }},
      {"fi_info.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         p.fi_info_domains = parse_fi_info_domains(r.output);
         p.fi_info_domain_count = static_cast<int>(p.fi_info_domains.size());
         r.parsed["domains"] = p.fi_info_domains;
       }},
      {"lsmod.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         auto mods = parse_lsmod(r.output);
         p.efa_module_loaded = has(mods, "efa");
         p.gdrdrv_loaded = has(mods, "gdrdrv");
         p.nvidia_fs_loaded = has(mods, "nvidia_fs");
         r.parsed["efa"] = *p.efa_module_loaded;
         r.parsed["gdrdrv"] = *p.gdrdrv_loaded;
         r.parsed["nvidia_fs"] = *p.nvidia_fs_loaded;
         p.lustre_module_loaded = has(mods, "lustre");
         r.parsed["lustre"] = *p.lustre_module_loaded;
       }},
      {"dev-gdrdrv.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         p.dev_gdrdrv = r.status == ProbeStatus::Ok && parse_ls_char_device(r.output);
         r.parsed["present"] = *p.dev_gdrdrv;
       }},
      {"ulimit-l.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string& id) {
         p.memlock = parse_ulimit(r.output, id);
         r.parsed["memlock"] = *p.memlock;
       }},
      {"df-nvme.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string& id) {
         if (r.status != ProbeStatus::Ok) {
           p.nvme_mounted = false;
           r.parsed["mounted"] = false;
           return;
         }
         auto row = parse_df(r.output, id);
         p.nvme_mounted = row.mounted_on == "/opt/dlami/nvme";
         if (*p.nvme_mounted) p.nvme_size = row.size;
         r.parsed["mounted_on"] = row.mounted_on;
         r.parsed["size"] = row.size;
         r.parsed["mounted"] = *p.nvme_mounted;
       }},
      {"uname-r.txt", [](ProbeRecord& r, HostProfile& p,
                         const std::string&) { keep(r, "kernel", p.kernel, first_line(r.output)); }},
      {"apt-mark-showhold.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         p.held_packages = parse_showhold(r.output);
         p.kernel_held = kernel_is_held(p.held_packages);
         r.parsed["held"] = p.held_packages;
         r.parsed["kernel_held"] = *p.kernel_held;
       }},
      {"lfs-version.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         keep(r, "lustre_version", p.lustre_version, parse_lfs_version(r.output));
       }},
      {"nvidia-fs-stats.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string& id) {
         auto s = parse_nvfs_stats(r.output, id);
         p.nvidia_fs_version = s.driver_version;
         if (s.driver_version) r.parsed["nvidia_fs_version"] = *s.driver_version;
         if (s.gds_version) r.parsed["gds_version"] = *s.gds_version;
       }},
      {"lnetctl-efa.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string& id) {
         auto nis = parse_lnet(r.output, id);
         int count = 0, up = 0;
         for (const auto& ni : nis) {
           if (!ni.nid.ends_with("@efa")) continue;
           ++count;
           if (ni.status == "up") ++up;
         }
         p.lnet_efa_count = count;
         p.lnet_efa_up = up;
         r.parsed["efa_nids"] = count;
         r.parsed["up"] = up;
       }},
      {"mounts.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         // /proc/mounts: "device mountpoint fstype options 0 0"
         std::vector<std::string> points;
         size_t pos = 0;
         while (pos < r.output.size()) {
           size_t nl = r.output.find('\n', pos);
           std::string_view line(r.output.data() + pos,
                                 (nl == std::string::npos ? r.output.size() : nl) - pos);
           size_t a = line.find(' '), b = a == std::string_view::npos ? a : line.find(' ', a + 1);
           if (b != std::string_view::npos) {
             std::string_view type = line.substr(b + 1, line.find(' ', b + 1) - b - 1);
             if (type == "lustre") points.emplace_back(line.substr(a + 1, b - a - 1));
           }
           if (nl == std::string::npos) break;
           pos = nl + 1;
         }
         p.lustre_mounted = !points.empty();
         r.parsed["lustre_mounts"] = points;
       }},
      {"efa-fsx-service.txt",
       [](ProbeRecord& r, HostProfile& p, const std::string&) {
         keep(r, "state", p.efa_fsx_service, first_line(r.output));
       }},
  };
  return kTable;
}

// Failed probes that still answer their question: a missing /dev/gdrdrv or
// /opt/dlami/nvme is exactly what those probes look for.
bool interpret_failed(const std::string& id, const ProbeRecord& r) {
  return (id == "dev-gdrdrv.txt" || id == "df-nvme.txt") && r.status == ProbeStatus::Failed &&
         says_missing(r);
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

const std::vector<ProbeSpec>& probe_specs() {
  static const std::vector<ProbeSpec> kSpecs = [] {
    const std::vector<std::string> sbin = {"/usr/sbin/", "/sbin/"};
    auto in_sbin = [&sbin](const std::string& n) {
      std::vector<std::string> v;
      for (const auto& d : sbin) v.push_back(d + n);
      return v;
    };
    std::vector<ProbeSpec> v{
        builtin("hostname.txt", K::Hostname, "hostname"),
        exec("nvidia-smi.csv", {"nvidia-smi", "--query-gpu=index,name,driver_version", "--format=csv"}),
        exec("nvidia-smi.txt", {"nvidia-smi"}),
        exec("fabricmanager.txt", {"systemctl", "is-active", "nvidia-fabricmanager"}, {}, true),
        exec("modinfo-efa.txt", {"modinfo", "efa"}, in_sbin("modinfo")),
        builtin("efa_installed_packages", K::ReadFile, "cat /opt/amazon/efa_installed_packages",
                "/opt/amazon/efa_installed_packages"),
        builtin("infiniband.txt", K::ListDir, "ls /sys/class/infiniband/", "/sys/class/infiniband"),
        exec("fi_info.txt", {"fi_info", "-p", "efa", "-t", "FI_EP_RDM"}, {"/opt/amazon/efa/bin/fi_info"}),
        exec("lsmod.txt", {"lsmod"}, in_sbin("lsmod")),
        exec("dev-gdrdrv.txt", {"ls", "-l", "/dev/gdrdrv"}),
        builtin("ulimit-l.txt", K::Memlock, "ulimit -l"),
        exec("df-nvme.txt", {"df", "-h", "/opt/dlami/nvme"}),
        exec("uname-r.txt", {"uname", "-r"}),
        exec("apt-mark-showhold.txt", {"apt-mark", "showhold"}),
        exec("lfs-version.txt", {"lfs", "--version"}, {"/usr/bin/lfs", "/usr/sbin/lfs"}),
        builtin("nvidia-fs-stats.txt", K::ReadFile, "cat /proc/driver/nvidia-fs/stats",
                "/proc/driver/nvidia-fs/stats"),
        exec("lnetctl-efa.txt", {"lnetctl", "net", "show", "--net", "efa"}, in_sbin("lnetctl")),
        exec("efa-fsx-service.txt", {"systemctl", "is-active", "configure-efa-fsx-lustre-client.service"}, {},
             true),
        builtin("mounts.txt", K::ReadFile, "cat /proc/mounts", "/proc/mounts"),
    };
    // The node gate's set (docs/slurm.md): files, /proc, /sys and small
    // tools; never nvidia-smi, fi_info, systemctl, apt-mark, lfs, lnetctl.
    for (auto& s : v)
      for (const char* id :
           {"hostname.txt", "ulimit-l.txt", "uname-r.txt", "infiniband.txt", "lsmod.txt", "dev-gdrdrv.txt",
            "df-nvme.txt", "mounts.txt", "nvidia-fs-stats.txt", "efa_installed_packages", "modinfo-efa.txt"})
        if (s.id == id) s.fast = true;
    return v;
  }();
  return kSpecs;
}

void interpret_probes(HostProfile& p) {
  const auto& table = interpreters();
  for (auto& [id, rec] : p.probes) {
    auto it = table.find(id);
    if (it == table.end()) continue;
    if (rec.status != ProbeStatus::Ok && !interpret_failed(id, rec)) continue;
    rec.parsed = Json::object();
    try {
      it->second(rec, p, id);
    } catch (const Error& e) {
      rec.parsed["parse_error"] = e.diagnostic().location() + ": " + e.diagnostic().message;
    }
  }
}

namespace {

std::vector<ProbeResult> run_specs(ProbeRunner& runner, std::chrono::milliseconds timeout,
                                   const std::vector<const ProbeSpec*>& specs) {
  std::vector<ProbeResult> results(specs.size());
  std::vector<std::jthread> threads;
  threads.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        results[i] = runner.run(*specs[i], timeout);
      } catch (const std::exception& e) {  // a runner bug stays this probe's failure
        results[i].status = ProbeStatus::Failed;
        results[i].error = e.what();
      }
    });
  threads.clear();  // joins
  return results;
}

ProbeRecord record(const ProbeSpec& spec, ProbeResult&& r) {
  ProbeRecord rec;
  rec.command = spec.command;
  rec.status = r.status;
  rec.exit_code = r.exit_code;
  rec.output = std::move(r.output);
  rec.error = std::move(r.error);
  rec.seconds = r.seconds;
  return rec;
}

}  // namespace

std::string current_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

HostProfile refresh_fast(ProbeRunner& runner, std::chrono::milliseconds timeout, const HostProfile& boot,
                         const std::string& source) {
  std::vector<const ProbeSpec*> fast;
  for (const auto& s : probe_specs())
    if (s.fast) fast.push_back(&s);
  auto results = run_specs(runner, timeout, fast);
  HostProfile p;
  p.captured_at = now_utc();
  p.source = source;
  p.boot_id = current_boot_id();
  for (const auto& [id, rec] : boot.probes) {
    ProbeRecord r = rec;
    r.parsed = nlohmann::ordered_json();
    p.probes[id] = std::move(r);
  }
  for (size_t i = 0; i < fast.size(); ++i) p.probes[fast[i]->id] = record(*fast[i], std::move(results[i]));
  interpret_probes(p);
  return p;
}

HostProfile capture(ProbeRunner& runner, std::chrono::milliseconds timeout, const std::string& source) {
  std::vector<const ProbeSpec*> specs;
  for (const auto& s : probe_specs()) specs.push_back(&s);
  auto results = run_specs(runner, timeout, specs);
  HostProfile p;
  p.captured_at = now_utc();
  p.source = source;
  p.boot_id = current_boot_id();
  for (size_t i = 0; i < specs.size(); ++i) p.probes[specs[i]->id] = record(*specs[i], std::move(results[i]));
  interpret_probes(p);
  return p;
}

void write_bundle(const HostProfile& p, const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) throw_errno(dir, "cannot create bundle directory");
  for (const auto& [id, r] : p.probes) {
    switch (r.status) {
      case ProbeStatus::Ok: write_file_atomic(dir + "/" + id, r.output); break;
      case ProbeStatus::Failed: write_file_atomic(dir + "/" + id + ".failed", r.error); break;
      case ProbeStatus::Timeout: write_file_atomic(dir + "/" + id + ".timeout", r.error); break;
      case ProbeStatus::Absent: break;
    }
  }
}

std::vector<std::string> unanswered_probes(const HostProfile& p) {
  std::vector<std::string> out;
  for (const auto& [id, r] : p.probes)
    if (r.status != ProbeStatus::Ok) out.push_back(id + " (" + std::string(to_string(r.status)) + ")");
  return out;
}

}  // namespace trainimg::host
