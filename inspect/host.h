// SPDX-License-Identifier: GPL-3.0-or-later
// Host capture and validation (issue 6): the trainimg.host/v1 profile, the
// probes that fill it, the host rules of domain.md §6, the fleet diff, and the
// NCCL log, nccl-tests and GDS checkers. Namespace trainimg::host.
//
// inspect --host reads only the profile: read_profile(path) and the
// optional fields of HostProfile (efa_installer_version, libfabric_version,
// ofi_nccl_version, openmpi4/5_version, driver_version, cuda_driver_version,
// kernel, gpu_model, gpu_count, efa_device_count).
#pragma once

#include "inspect/host/checkers.h"
#include "inspect/host/diff.h"
#include "inspect/host/parsers.h"
#include "inspect/host/probes.h"
#include "inspect/host/profile.h"
#include "inspect/host/rules.h"
#include "inspect/host/fleet.h"
#include "inspect/host/runner.h"
