# Findings the author has read and accepted, silenced on their line.
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

a = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B", load_in_8bit=True)  # noqa: ECO101
b = AutoModelForCausalLM.from_pretrained(
    "Qwen/Qwen2.5-14B",
    quantization_config=BitsAndBytesConfig(load_in_8bit=True),
)  # noqa: ECO101 -- a multi-line call is silenced on its last line too
c = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-32B", load_in_8bit=True)  # noqa: ECO102 (another rule)
d = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-3B", load_in_8bit=True)  # noqa
