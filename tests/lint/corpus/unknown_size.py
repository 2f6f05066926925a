# The model comes from the command line: its size is unknown. ECO101 still speaks, citing every measured size,
# because INT8 with the default threshold cost energy at all of them; ECO102 needs the size and stays silent.
import sys

from transformers import AutoModelForCausalLM, BitsAndBytesConfig

model_path = sys.argv[1]
int8 = AutoModelForCausalLM.from_pretrained(model_path, load_in_8bit=True)
nf4 = AutoModelForCausalLM.from_pretrained(
    model_path, quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")
)
