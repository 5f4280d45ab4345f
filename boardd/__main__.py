"""``python -m boardd``."""

from boardd.cli import main

raise SystemExit(main())
