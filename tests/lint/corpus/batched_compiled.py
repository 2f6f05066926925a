# Done right: prompts in batches of 8 with padding, static cache and torch.compile.
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

model_id = "Qwen/Qwen2.5-7B-Instruct"
tok = AutoTokenizer.from_pretrained(model_id, padding_side="left")
model = AutoModelForCausalLM.from_pretrained(model_id, torch_dtype=torch.bfloat16, device_map="cuda")
model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)

prompts = ["Tell me about GPUs."] * 64
batches = [prompts[i : i + 8] for i in range(0, len(prompts), 8)]
for chunk in batches:
    enc = tok(chunk, return_tensors="pt", padding=True).to("cuda")
    out = model.generate(**enc, max_new_tokens=128, cache_implementation="static")

for start in range(0, len(prompts), 8):
    enc = tok(prompts[start : start + 8], return_tensors="pt", padding=True).to("cuda")
    out = model.generate(**enc, max_new_tokens=128, cache_implementation="static")
