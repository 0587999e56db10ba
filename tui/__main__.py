"""``python -m tui watch|play|replay``: the terminal app's commands without the ``marathon`` script."""

from __future__ import annotations

from tui.cli import main

raise SystemExit(main())
