"""The host: CPU time and steal, process knobs (affinity, niceness, gc), clocks."""
