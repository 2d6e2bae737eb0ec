"""dsh_schedule_ui."""
