"""The built-in web chat channel.

Nothing is imported here, so loading the channel's spec (``adapters.webchat.spec``) while the
config is validated stays light; the adapter is ``adapters.webchat.adapter:WebchatAdapter``.
"""
