"""Scheduled and triggered sessions: cron jobs (and the scheduler that fires them)."""
