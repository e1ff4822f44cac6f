"""Matrix channel (matrix-nio with end-to-end encryption through vodozemac; D77, D170).

``adapters.matrix.spec`` is the registry entry (no SDK import); the adapter lives in
``adapters.matrix.adapter`` and is imported only when ``channels.matrix`` is configured.
"""
