"""Slack channel: one ``SlackAdapter`` per configured account (slack-bolt, async).

Nothing is imported here, so loading the channel's spec (``adapters.slack.spec``) while the
config is validated stays light; the adapter is ``adapters.slack.adapter:SlackAdapter``.
"""
