# quantization_config given as a plain dict (transformers accepts one), and the FP4 default of load_in_4bit.
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained(
    "Qwen/Qwen2.5-3B-Instruct",
    quantization_config={"load_in_4bit": True, "bnb_4bit_quant_type": "nf4"},
)

# load_in_4bit alone is FP4 (bitsandbytes' default quant type): the dataset has no FP4 measurement
fp4 = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B-Instruct", load_in_4bit=True)

# another quantization method: not bitsandbytes, not linted
gptq = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B-Instruct", quantization_config={"quant_method": "gptq"})
