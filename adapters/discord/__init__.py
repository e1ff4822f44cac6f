"""Discord channel (discord.py 2.7): one ``DiscordAdapter`` per configured account.

Nothing is imported here, so loading the channel's spec (``adapters.discord.spec``) while the
config is validated stays light; the adapter is ``adapters.discord.adapter:DiscordAdapter``.
"""
