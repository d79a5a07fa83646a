#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/timed.py OUT CMD...: runs CMD, writes "SECONDS PEAK_RSS_KIB" to OUT
(wall time, and the child's peak resident set), exits with CMD's status.
For machines without GNU time or bc."""
import resource
import subprocess
import sys
import time

t0 = time.monotonic()
rc = subprocess.run(sys.argv[2:]).returncode
t = time.monotonic() - t0
with open(sys.argv[1], "w") as f:
    f.write("%.3f %d\n" % (t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc)
