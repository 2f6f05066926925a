"""A run: settings, preflight, the engine, the spread gate, checkpoints, the display and the submission."""
