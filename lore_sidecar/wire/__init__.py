"""The JSON-RPC contract: method names, parameter types, and the converter."""
