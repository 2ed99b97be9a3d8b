"""`lore-sidecar ui`: a local dashboard where a person sees and corrects what agents remember.

Loopback only, a random port, a per-launch secret token (or the HttpOnly session cookie the
browser gets for a one-time launch code: the token is in no command line), only the user who
started it, Host and Origin checked, security headers on every answer (guard.py, peers.py); pages rendered on the server, charts as inline SVG, no script and no
build step (pages.py, html.py). Reads and writes go through the `lore/*` handlers of an
engine host (lore_sidecar/engine_host.py), so budgets, redaction and the follower's spool
apply exactly as for any client.
"""
