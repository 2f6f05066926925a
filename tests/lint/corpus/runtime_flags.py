# The precision is chosen on the command line: nothing can be said from the file alone.
import argparse

from transformers import AutoModelForCausalLM, BitsAndBytesConfig

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="Qwen/Qwen2.5-7B-Instruct")
parser.add_argument("--int8", action="store_true")
parser.add_argument("--quant-type", default="nf4")
args = parser.parse_args()

model = AutoModelForCausalLM.from_pretrained(args.model, load_in_8bit=args.int8)
cfg = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=args.quant_type)
model4 = AutoModelForCausalLM.from_pretrained(args.model, quantization_config=cfg)
