# %% [markdown]
# Exported from a notebook (jupytext percent format): compare 8-bit and 4-bit on one model.

# %%
# !pip install -q transformers bitsandbytes accelerate

# %%
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

model_name = "Qwen/Qwen2.5-7B-Instruct"
tokenizer = AutoTokenizer.from_pretrained(model_name)

# %%
model_8bit = AutoModelForCausalLM.from_pretrained(model_name, load_in_8bit=True, device_map="auto")

# %%
bnb_4bit = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")
model_4bit = AutoModelForCausalLM.from_pretrained(model_name, quantization_config=bnb_4bit, device_map="auto")

# %%
inputs = tokenizer("Quantization saves memory. Does it save energy?", return_tensors="pt").to("cuda")
print(tokenizer.decode(model_4bit.generate(**inputs, max_new_tokens=50)[0]))
