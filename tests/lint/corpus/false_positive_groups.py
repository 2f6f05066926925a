# A loop over groups of prompts, each group already a batch: the linter cannot tell a list of lists from a list of
# strings, and reports ECO103 (a known false positive; rename the variable with "batch" or silence it).
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

name = "Qwen/Qwen2.5-1.5B-Instruct"
tok = AutoTokenizer.from_pretrained(name, padding_side="left")
model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float16, device_map="cuda")

groups = [["q1", "q2", "q3", "q4"], ["q5", "q6", "q7", "q8"]]
for group in groups:
    enc = tok(group, return_tensors="pt", padding=True).to("cuda")
    model.generate(**enc, max_new_tokens=64)
