"""`lore-sidecar ui`: a local dashboard where a person sees and corrects what agents remember.

Loopback only, a random port, a per-launch secret token on every request, Host and Origin
checked (guard.py); pages rendered on the server, charts as inline SVG, no script and no
build step (pages.py, html.py). Reads and writes go through the `lore/*` handlers of an
engine host (lore_sidecar/engine_host.py), so budgets, redaction and the follower's spool
apply exactly as for any client.
"""
