"""Telegram channel (python-telegram-bot 22.8).

Nothing is imported here, so loading the channel's spec (``adapters.telegram.spec``) while the
config is validated stays light; the adapter is ``adapters.telegram.adapter:TelegramAdapter``.
"""
