"""Who may talk to the bot (decision D11): policy, pairing, and the admission check."""
