"""The Textual terminal app: watch, play and replay screens."""
