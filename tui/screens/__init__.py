"""The screens of the terminal app: watch, play, replay, the scorecard, and the dialogs
(help, jump, tool forms, confirmations)."""
