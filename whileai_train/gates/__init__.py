"""Before a run, read-only: hack_scan and its features, hygiene, near-duplicate asks, decontaminate, publish_gate."""
