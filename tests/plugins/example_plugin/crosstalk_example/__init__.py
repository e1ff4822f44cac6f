"""An example third-party Crosstalk package: a plugin (`plugin.py`: `/shout`, owner-only, and
the `example_weather` tool) and a channel (`channel.py`: `loopback`, messages in and replies out
over HTTP). Nothing is imported here, so loading the channel's spec stays light."""
