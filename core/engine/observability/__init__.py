"""What operators see of a running gateway: Prometheus metrics and structured logs."""
