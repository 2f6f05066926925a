# The seed's advice applied: threshold 0.0. ECO101 is about the default threshold only.
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

cfg = BitsAndBytesConfig(load_in_8bit=True, llm_int8_threshold=0.0)
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B-Instruct", quantization_config=cfg, device_map="auto")

# an explicit 6.0 is the default written out: still ECO101
explicit = BitsAndBytesConfig(load_in_8bit=True, llm_int8_threshold=6.0)
model2 = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-14B-Instruct", quantization_config=explicit)
