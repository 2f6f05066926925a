# Loops that are not one prompt per call: a sampling sweep and repeated timing of one batch.
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

name = "Qwen/Qwen2.5-3B-Instruct"
tok = AutoTokenizer.from_pretrained(name)
model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float16, device_map="cuda")
model.generation_config.cache_implementation = "static"

inputs = tok(["a question", "another question"], return_tensors="pt", padding=True).to("cuda")
for temperature in [0.2, 0.7, 1.0]:
    model.generate(**inputs, do_sample=True, temperature=temperature, max_new_tokens=64)

for _ in range(10):
    model.generate(**inputs, max_new_tokens=64)
