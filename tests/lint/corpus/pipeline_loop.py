# A text-generation pipeline called once per question.
import torch
from transformers import pipeline

questions = ["What is NF4?", "What is a KV cache?", "Why batch?"]
pipe = pipeline("text-generation", model="Qwen/Qwen2.5-0.5B-Instruct", torch_dtype=torch.bfloat16, device=0)

answers = []
for i, q in enumerate(questions):
    answers.append(pipe(q, max_new_tokens=128)[0]["generated_text"])

# the pipeline batches itself when given the list
batched = pipe(questions, max_new_tokens=128, batch_size=8)
