// SPDX-License-Identifier: GPL-3.0-or-later
// The probes of seed 000 "Host validation" (plus the CUDA driver, Lustre,
// nvidia-fs and LNet facts of seed 004), run in parallel into a HostProfile.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "inspect/host/profile.h"
#include "inspect/host/runner.h"

namespace trainimg::host {

/// Every probe, in a fixed order; ids are the bundle file names.
const std::vector<ProbeSpec>& probe_specs();

/// Runs every probe through `runner`, each on its own thread with
/// `timeout`, then parses the outputs into facts. A probe that is absent,
/// failed, timed out or printed something unparsable leaves its facts unset
/// and says why in its record; capture itself only throws on a broken runner.
HostProfile capture(ProbeRunner& runner, std::chrono::milliseconds timeout, const std::string& source);

/// The node gate's capture: the probes marked fast are run again and
/// replace their records in `boot` (the boot capture; an empty profile when
/// there is none), every fact is re-derived from the records. Probes that
/// are not fast keep the boot capture's evidence.
HostProfile refresh_fast(ProbeRunner& runner, std::chrono::milliseconds timeout, const HostProfile& boot,
                         const std::string& source);

/// This boot's id (/proc/sys/kernel/random/boot_id), "" when unreadable.
std::string current_boot_id();

/// Fills the facts of `p` from its probe records (what capture does after
/// running them; also used by tests on recorded outputs).
void interpret_probes(HostProfile& p);

/// Writes the raw outputs as a bundle directory (created if missing): one
/// file per ok probe, `<id>.failed` holding stderr, `<id>.timeout`. Each file
/// is written atomically.
void write_bundle(const HostProfile& p, const std::string& dir);

/// Probe ids whose status is not ok, as "id (status)".
std::vector<std::string> unanswered_probes(const HostProfile& p);

}  // namespace trainimg::host
