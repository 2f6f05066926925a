# One generate() per prompt inside a list comprehension, and no dtype given (precision unknown: ECO103/4 silent).
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

tok = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-3B-Instruct")
m16 = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-3B-Instruct", torch_dtype="float16", device_map="cuda")
outs = [m16.generate(**tok(p, return_tensors="pt").to("cuda"), max_new_tokens=64) for p in ["a", "b", "c"]]

m_any = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B-Instruct", device_map="cuda")
outs = [m_any.generate(**tok(p, return_tensors="pt").to("cuda"), max_new_tokens=64) for p in ["a", "b", "c"]]
