// SPDX-License-Identifier: GPL-3.0-or-later
// Slurm as the fleet's engine (issue 12): the node list from sinfo /
// scontrol, one `trainimg host capture -o -` per node through srun, and
// draining / resuming nodes with scontrol. Only the Slurm client programs
// are run (srun, sinfo, scontrol from PATH); SLURM_CONF is passed through.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "common/policy/policy.h"
#include "inspect/host/fleet.h"

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

// ------------------------------------------------ this node (builder/slurm/node.cc)

/// This node's profile: replayed from the bundle directory `from` when given;
/// else from TRAINIMG_HOST_BUNDLE_DIR/$SLURMD_NODENAME when that variable is
/// set (tests, a site replaying a fleet's bundles); else the live probes.
/// Throws Error for a missing bundle or a timeout that is not positive.
host::HostProfile capture_node(const std::string& from, double timeout_s);
/// The live probes, never a replay (`host bundle`). Throws as capture_node.
host::HostProfile capture_live(double timeout_s);
/// `host check`: the profile `file` (empty: this node, capture_node) judged
/// against `e` and the reference profile `reference` (empty: none); the
/// report before policy. Throws Error for an unreadable profile.
Report check_node(const std::string& file, const host::HostExpectations& e, const std::string& reference,
                  double timeout_s);
/// "trainimg: captured N probes on HOST: M ok[, K not answered: ids]\n".
std::string capture_summary(const host::HostProfile& p);

struct NodeGateOptions {
  host::HostExpectations expect;
  double timeout_s = 10;  ///< per probe, at most 2 s in the gate
  bool drain = false;     ///< drain on an error, resume when clean (only a trainimg drain)
};
/// The Slurm node gate (`host check --live --slurm [--drain]`, docs/slurm.md):
/// the boot capture (TRAINIMG_HOST_PROFILE, default /run/trainimg/host.json)
/// with the fast probes re-run when it is of this boot and kernel, else the
/// fast probes alone (a note on `err` says why); the host rules and the
/// config; one `trainimg: RULE: MESSAGE` line per error on `err`. Returns
/// whether the node is clean.
bool run_node_gate(const NodeGateOptions& o, const policy::Policy& pol, std::ostream& err);

/// This binary's absolute path (/proc/self/exe): srun runs the same file on
/// every node (a shared file system). Throws Error when it cannot be read.
std::string self_path();

/// fleet check's nodes: DIR/*.json (NODE.json each, sorted), or every node
/// of the partition / hostlist captured through srun (gather_profiles).
struct FleetInputs {
  std::string partition, nodes, profiles;
  double timeout_s = 60;
  bool drain = false;  ///< only checked against --profiles here
};
/// Throws Error for a combination that cannot be (naming the flag), an
/// unreadable directory or profile, or a Slurm command that fails.
std::vector<host::FleetNode> gather_fleet(const FleetInputs& in);
/// DIR/*.json, each a node named by its file; throws Error for no profile.
std::vector<host::FleetNode> read_fleet_profiles(const std::string& dir);

}  // namespace trainimg::builder
