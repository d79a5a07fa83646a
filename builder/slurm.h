// SPDX-License-Identifier: GPL-3.0-or-later
// Slurm as the fleet's engine (issue 12): the node list from sinfo /
// scontrol, one `trainimg host capture -o -` per node through srun, and
// draining / resuming nodes with scontrol. Only the Slurm client programs
// are run (srun, sinfo, scontrol from PATH); SLURM_CONF is passed through.
#pragma once

#include <string>
#include <vector>

#include "inspect/host.h"

namespace trainimg::builder {

/// The nodes to check: `hostlist` expanded (`scontrol show hostnames`),
/// else the nodes of `partition`, else every node of `sinfo -N`; in sinfo's
/// order, each once. Throws Error when the command fails or lists nothing.
std::vector<std::string> slurm_nodes(const std::string& partition, const std::string& hostlist);

struct SlurmNodeState {
  std::string state;   ///< sinfo %T, e.g. "idle", "drained", "down*"
  std::string reason;  ///< sinfo %E ("" for none)
};
/// State and reason of one node (`sinfo -h -N -n NODE -o '%T|%E'`).
SlurmNodeState slurm_node_state(const std::string& node);

/// True for a state that cannot start a task now (down, drained/draining,
/// fail, not responding '*', future, unknown): no srun is attempted there.
bool slurm_state_unusable(const std::string& state);

struct GatherOptions {
  std::string binary;     ///< absolute path of trainimg, the same on every node
  double timeout_s = 60;  ///< per node: srun --immediate and the step's time limit
  int parallel = 32;      ///< sruns in flight
};

/// Runs `BINARY host capture -o -` on every node, one task per node
/// (`srun -N1 -n1 -w NODE --immediate=T --time=…`), in parallel. A node
/// in an unusable state, or whose srun fails, times out or prints no
/// readable profile, becomes a node-unreachable FleetNode saying why.
std::vector<host::FleetNode> gather_profiles(const std::vector<std::string>& nodes, const GatherOptions& o);

struct DrainOutcome {
  bool drained = false;
  std::string why;  ///< why not (an administrator's reason kept), or the scontrol error
};
/// `scontrol update NodeName=NODE State=DRAIN Reason=REASON` unless the
/// node already carries a reason that does not start with "trainimg:" (an
/// administrator's: never overwritten).
DrainOutcome drain_node(const std::string& node, const std::string& reason);
/// `scontrol update NodeName=NODE State=RESUME` when the node is drained
/// with a reason starting "trainimg:"; returns whether it resumed it.
bool resume_node(const std::string& node);

}  // namespace trainimg::builder
