"""`lore-sidecar gateway`: a loopback HTTP proxy that applies context assembly to a harness's
model calls (Anthropic `/v1/messages`, OpenAI `/v1/chat/completions` and `/v1/responses`),
streams the provider's answer back unchanged, and feeds its usage back. It fails open: when
the engine errors or is slow, the original body goes upstream untouched.
"""
