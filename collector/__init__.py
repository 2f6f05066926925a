"""The collector: measures a GPU (NVML) while a model generates, and writes a signed submission."""
