# Names resolve in their own scope, to the binding before the call.
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

config = BitsAndBytesConfig(load_in_8bit=True, llm_int8_threshold=0.0)


def load_default():
    config = BitsAndBytesConfig(load_in_8bit=True)  # shadows the module's config inside this function
    return AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B-Instruct", quantization_config=config)


def load_tuned():
    return AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B-Instruct", quantization_config=config)


class Loader:
    def __init__(self, model_id):
        self.model = AutoModelForCausalLM.from_pretrained(model_id, quantization_config=config)


later = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B", quantization_config=config)
config = BitsAndBytesConfig(load_in_8bit=True)  # rebinding after the call above does not change it
