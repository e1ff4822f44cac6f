"""Webhooks: `POST /hooks/<path>` starts an agent turn in a `hook:` session (D15)."""
