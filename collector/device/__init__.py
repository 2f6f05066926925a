"""The GPU side: the monitor seam (gpu), NVML (nvml), recorded traces (trace, replay), the power sampler."""
