"""Model providers: configured refs resolved to pydantic-ai models, fallback chains, provider
clients and errors, prices, and the timing wrapper (D51, D40, D50). The agent turn uses them."""
