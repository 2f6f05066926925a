# Load options gathered in a dict and spread with **, as scripts with many flags do.
from transformers import AutoModelForCausalLM

MODEL = "Qwen/Qwen2.5-1.5B-Instruct"
load_kwargs = dict(device_map="auto", trust_remote_code=False)
load_kwargs["load_in_8bit"] = True

model = AutoModelForCausalLM.from_pretrained(MODEL, **load_kwargs)

extra = {"load_in_8bit": False}
plain = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-3B-Instruct", **extra)
