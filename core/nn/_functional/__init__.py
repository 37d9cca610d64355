"""Implementation modules of ``ember.nn.functional`` (the public names live there)."""
