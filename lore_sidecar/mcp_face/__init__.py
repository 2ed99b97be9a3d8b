"""`lore-sidecar mcp`: the store's tools for agents, over the Model Context Protocol (stdio).

An instance of the shared store like every sidecar (writer or follower). Each tool builds
the params of the `lore/*` method it stands for and runs that method's own handler, so the
checks, the write path and the results are the ones the LSP face has; only the rendering
(text a model reads) and the error channel (tool errors) are this face's own.
"""
