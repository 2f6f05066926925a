"""A generation script: read prompts, answer each with generate() in FP16."""

import argparse
import json

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL_ID = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("prompts")
    args = parser.parse_args()
    with open(args.prompts) as f:
        prompts = [json.loads(line)["prompt"] for line in f]

    tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
    model = AutoModelForCausalLM.from_pretrained(MODEL_ID, torch_dtype=torch.float16, device_map="cuda")

    results = []
    for prompt in prompts:
        inputs = tokenizer(prompt, return_tensors="pt").to("cuda")
        output = model.generate(**inputs, max_new_tokens=256, do_sample=False)
        results.append(tokenizer.decode(output[0], skip_special_tokens=True))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
