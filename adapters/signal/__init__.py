"""Signal channel through a signal-cli daemon's HTTP API (D77): SSE events in, JSON-RPC out.

Nothing is imported here, so loading the channel's spec (``adapters.signal.spec``) while the
config is validated stays light; the adapter is ``adapters.signal.adapter:SignalAdapter``.
"""
