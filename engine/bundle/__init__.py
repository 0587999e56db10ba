"""The bundle format: the event stream's schema, the encrypted journal, signing keys, sealing and verifying."""
