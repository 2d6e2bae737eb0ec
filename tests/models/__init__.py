"""The model adapters against a fake OpenAI-compatible server (issue 12 item 2)."""
