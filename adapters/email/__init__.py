"""Email channel: IMAP in (IDLE where offered, else polling), SMTP out (D77, D171).

``adapters.email.spec`` is the registry entry (no library import); the adapter lives in
``adapters.email.adapter`` and is imported only when ``channels.email`` is configured.
"""
