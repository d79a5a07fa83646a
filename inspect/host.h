// SPDX-License-Identifier: GPL-3.0-or-later
// Host capture and validation (issue 6): the trainimg.host/v1 profile, the
// probes that fill it, the host rules of domain.md §6, and the NCCL log,
// nccl-tests and GDS checkers. Namespace trainimg::host.
#pragma once

#include "inspect/host/profile.h"
