// SPDX-License-Identifier: GPL-3.0-or-later
// The host output parsers (inspect/host/parsers.h, and the checkers of inspect/host/checkers.h): the first
// byte picks the parser, the rest is the tool's output. The checks that
// follow a parser run on what it returned.
#include "common/units.h"
#include "inspect/host/checkers.h"
#include "inspect/host/parsers.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainimg;
  using namespace trainimg::host;
  if (size < 1) return 0;
  std::string_view t = fuzz::as_view(data + 1, size - 1);
  const std::string file = "out.txt";
  try {
    switch (data[0] % 20) {
      case 0: parse_nvidia_smi_csv(t, file); break;
      case 1: parse_nvidia_smi_cuda_version(t); break;
      case 2: parse_modinfo_version(t); break;
      case 3: parse_efa_manifest(t); break;
      case 4: parse_infiniband(t); break;
      case 5: parse_fi_info_domains(t); break;
      case 6: parse_lsmod(t); break;
      case 7: parse_ls_char_device(t); break;
      case 8: parse_ulimit(t, file); break;
      case 9: parse_df(t, file); break;
      case 10: kernel_is_held(parse_showhold(t)); break;
      case 11: parse_lfs_version(t); break;
      case 12: {
        NvfsStats s = parse_nvfs_stats(t, file);
        CheckOutput out;
        check_nvidia_fs_version(s.driver_version, false, file, "2.17", out);
        check_gds_counters(s, s, file, file, GdsMode::GdsRead, 1 << 20, out);
        break;
      }
      case 13: {
        auto nis = parse_lnet(t, file);
        CheckOutput out;
        check_lnet_interfaces(nis, file, 8, out);
        check_lnet_counters(nis, nis, file, 8, true, out);
        break;
      }
      case 14: {
        NcclLog log = parse_nccl_log(t);
        check_nccl_log(log, t, file, 8);
        break;
      }
      case 15: {
        NcclTests nt = parse_nccl_tests(t, file);
        check_nccl_tests(nt, t, file, 100.0, 0.9);
        break;
      }
      case 16: {
        GdscheckReport g = parse_gdscheck(t);
        CheckOutput out;
        check_gdscheck(g, t, file, "2.17", out);
        break;
      }
      case 17: parse_byte_size(t); break;
      case 18: parse_gds_mode(t); break;
      default: first_line(t); break;
    }
  } catch (const Error&) {
  }
  return 0;
}
