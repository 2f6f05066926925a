"""Analysis on the published dataset: J/token tables, changes against the baseline, crossovers."""
