"""dsh_schedule."""
