# Chat-style generation: a 4-bit pipeline built from model_kwargs, and a chat-template loop over conversations.
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, pipeline

model_id = "Qwen/Qwen2.5-3B-Instruct"
bnb_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16)
chat = pipeline(
    "text-generation",
    model=model_id,
    model_kwargs={"quantization_config": bnb_config, "device_map": "auto"},
)

tokenizer = AutoTokenizer.from_pretrained(model_id)
model = AutoModelForCausalLM.from_pretrained(model_id, torch_dtype=torch.bfloat16, device_map="cuda")
conversations = [[{"role": "user", "content": "Hi"}], [{"role": "user", "content": "What is NF4?"}]]
for messages in conversations:
    input_ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt").to("cuda")
    reply = model.generate(input_ids=input_ids, max_new_tokens=128)
