# Shape of the Hugging Face "bitsandbytes" quantization guide: 8-bit through a config object.
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

quantization_config = BitsAndBytesConfig(load_in_8bit=True)

model_8bit = AutoModelForCausalLM.from_pretrained(
    "bigscience/bloom-1b7",
    device_map="auto",
    quantization_config=quantization_config,
)

# the guide's small example model: 350M lies below every measured size, so nothing is said about it
model_small = AutoModelForCausalLM.from_pretrained("facebook/opt-350m", quantization_config=quantization_config)
