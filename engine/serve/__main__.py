"""``python -m engine.serve``: ``marathon serve`` without the ``marathon`` entry point."""

from __future__ import annotations

from engine.serve.cli import main

raise SystemExit(main())
