"""``python -m splitops`` runs the ``splitops`` command line."""

from splitops.cli import main

raise SystemExit(main())
