"""WhatsApp channel (the WhatsApp Business Cloud API, D77): webhook in, Graph API out.

Nothing is imported here, so loading the channel's spec (``adapters.whatsapp.spec``) while the
config is validated stays light; the adapter is ``adapters.whatsapp.adapter:WhatsAppAdapter``.
"""
