"""Facts: bitemporal rules (pure) and the service that journals and queries them."""
