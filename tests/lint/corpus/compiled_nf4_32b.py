# Static cache and torch.compile, with an NF4 model: transformers compiles FP16/BF16 but not bitsandbytes models on
# this path (the "compiled" stack), so NF4 is compared with compiled FP16 there.
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

name = "Qwen/Qwen2.5-32B-Instruct"
cfg = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained(name, quantization_config=cfg, device_map="auto")
tok = AutoTokenizer.from_pretrained(name)
out = model.generate(**tok("hello", return_tensors="pt"), cache_implementation="static", max_new_tokens=32)
