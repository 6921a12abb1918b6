"""``python -m benchmarks``: see :mod:`benchmarks.suite`."""

from __future__ import annotations

import sys

from benchmarks.suite import main

sys.exit(main(sys.argv[1:]))
