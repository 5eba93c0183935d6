"""Suite platform: token counting (TOK-*) and rate limits (RL-*) of the platform API."""
