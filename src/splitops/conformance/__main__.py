"""``python -m splitops.conformance FOLDER``: write the upstream node-test files (onnx's
``split.py`` and ``splittosequence.py`` style) into FOLDER; the repository keeps them in
``docs/upstream``."""

from __future__ import annotations

import sys
from pathlib import Path

from ._upstream import write_upstream


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m splitops.conformance FOLDER", file=sys.stderr)
        return 2
    for path in write_upstream(Path(argv[0])):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
