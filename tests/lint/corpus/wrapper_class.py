"""A small serving wrapper: the model lives on self, helpers come before the load, names are imported under
aliases, and the prompts of a request are answered one by one."""

from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers import BitsAndBytesConfig as BnbConfig

MODEL = "Qwen/Qwen2.5-14B-Instruct"
QUANT = BnbConfig(load_in_8bit=True)


class Generator:
    """Wraps one 8-bit model."""

    def __init__(self) -> None:
        self.tokenizer = AutoTokenizer.from_pretrained(MODEL)
        self.model = AutoModelForCausalLM.from_pretrained(MODEL, quantization_config=QUANT, device_map="auto")

    def answer_all(self, questions: list[str]) -> list[str]:
        answers = []
        for question in questions:
            enc = self.tokenizer(question, return_tensors="pt").to(self.model.device)
            out = self.model.generate(**enc, max_new_tokens=200)
            answers.append(self.tokenizer.decode(out[0], skip_special_tokens=True))
        return answers
