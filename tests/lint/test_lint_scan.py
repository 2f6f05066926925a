"""What the scanner reads from the syntax tree: loads, quantization, dtypes, generate calls and their loops."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ecocompute.lint.scan import Facts, scan


def facts(source: str) -> Facts:
    return scan(ast.parse(textwrap.dedent(source)))


def only_load(source: str) -> tuple[str | None, str | None, bool, str | None]:
    loads = facts(source).loads
    assert len(loads) == 1, loads
    load = loads[0]
    return load.model_id, load.quant.precision if load.quant else None, load.quant_known, load.dtype


@pytest.mark.parametrize(
    ("source", "precision"),
    [
        ('m = A.from_pretrained("x/y-7B", load_in_8bit=True)', "int8"),
        ('m = A.from_pretrained("x/y-7B", load_in_4bit=True)', "fp4"),
        ('m = A.from_pretrained("x/y-7B", quantization_config=BitsAndBytesConfig(load_in_8bit=True))', "int8"),
        ('m = A.from_pretrained("x/y-7B", quantization_config=transformers.BitsAndBytesConfig('
         'load_in_8bit=True, llm_int8_threshold=0.0))', "int8-t0"),
        ('m = A.from_pretrained("x/y-7B", quantization_config=BitsAndBytesConfig(load_in_8bit=True, '
         "llm_int8_threshold=3))", "int8-t3"),
        ('m = A.from_pretrained("x/y-7B", quantization_config={"load_in_4bit": True, "bnb_4bit_quant_type": "nf4"})',
         "nf4"),
        ('m = A.from_pretrained("x/y-7B", quantization_config=dict(load_in_4bit=True, bnb_4bit_quant_type="fp4"))',
         "fp4"),
        ('cfg = {"load_in_4bit": True}\ncfg["bnb_4bit_quant_type"] = "nf4"\n'
         'm = A.from_pretrained("x/y-7B", quantization_config=BitsAndBytesConfig(**cfg))', "nf4"),
        ('kw = dict(load_in_8bit=True)\nm = A.from_pretrained("x/y-7B", **kw)', "int8"),
        ('base = {"load_in_8bit": True}\nkw = {**base, "device_map": "auto"}\nm = A.from_pretrained("x/y-7B", **kw)',
         "int8"),
        ('m = A.from_pretrained("x/y-7B", torch_dtype=torch.float16)', None),
    ],
)  # fmt: skip
def test_quantization_is_resolved(source: str, precision: str | None) -> None:
    model_id, found, known, _ = only_load(source)
    assert (model_id, found, known) == ("x/y-7B", precision, True)


@pytest.mark.parametrize(
    "source",
    [
        'm = A.from_pretrained("x/y-7B", quantization_config=get_config())',
        'm = A.from_pretrained("x/y-7B", **options)',
        'm = A.from_pretrained("x/y-7B", load_in_8bit=args.int8)',
        'm = A.from_pretrained("x/y-7B", quantization_config=BitsAndBytesConfig(load_in_4bit=True, '
        "bnb_4bit_quant_type=qtype))",
    ],
)
def test_what_the_file_does_not_say_is_unknown_never_a_default(source: str) -> None:
    _, precision, known, _ = only_load(source)
    assert precision is None
    assert not known or "qtype" in source


def test_dtype_model_id_and_fstring() -> None:
    assert only_load('size = "7B"\nm = A.from_pretrained(f"Qwen/Qwen2.5-{size}", torch_dtype="bfloat16")') == (
        "Qwen/Qwen2.5-7B", None, True, "bf16")  # fmt: skip
    assert only_load('m = A.from_pretrained(pretrained_model_name_or_path="a/b-1B", dtype=torch.float32)') == (
        "a/b-1B", None, True, "fp32")  # fmt: skip


def test_tokenizers_and_configs_are_not_model_loads() -> None:
    f = facts('t = AutoTokenizer.from_pretrained("a/b-7B")\nc = AutoConfig.from_pretrained("a/b-7B")')
    assert f.loads == []


def test_pipeline_loads_through_model_kwargs_and_skips_other_tasks() -> None:
    f = facts("""
        g = pipeline("text-generation", model="a/b-1.5B", model_kwargs={"load_in_8bit": True})
        c = pipeline("sentiment-analysis", model="a/b-1.5B", model_kwargs={"load_in_8bit": True})
        h = pipeline("text-generation", model=model_object)
    """)
    assert [(ld.model_id, ld.quant.precision if ld.quant else None, ld.target) for ld in f.loads] == [
        ("a/b-1.5B", "int8", "g")]  # fmt: skip


def test_names_resolve_in_their_scope_and_order() -> None:
    f = facts("""
        cfg = BitsAndBytesConfig(load_in_8bit=True, llm_int8_threshold=0.0)
        def f():
            cfg = BitsAndBytesConfig(load_in_8bit=True)
            return A.from_pretrained("a/b-7B", quantization_config=cfg)
        m = A.from_pretrained("a/b-7B", quantization_config=cfg)
        cfg = BitsAndBytesConfig(load_in_8bit=True)
    """)
    assert [ld.quant.precision for ld in f.loads if ld.quant] == ["int8", "int8-t0"]


GEN = (
    'tok = AutoTokenizer.from_pretrained("a/b-1B")\n'
    'model = AutoModelForCausalLM.from_pretrained("a/b-1B", torch_dtype=torch.float16)\n'
)


@pytest.mark.parametrize(
    ("loop", "fed"),
    [
        ("for p in prompts:\n    model.generate(**tok(p, return_tensors='pt'))", True),
        ("for p in prompts:\n    x = tok(p)\n    y = x.to('cuda')\n    model.generate(**y)", True),
        ("for i, p in enumerate(tqdm(prompts)):\n    model.generate(tok(p).input_ids)", True),
        ("for i in range(len(prompts)):\n    model.generate(**tok(prompts[i]))", True),
        ("for row in dataset['train']:\n    model.generate(input_ids=tok(row['text']).input_ids)", True),
        ("for line in open('p.txt'):\n    model.generate(**tok(line))", True),
        ("outs = [model.generate(**tok(p)) for p in ['a', 'b']]", True),
        ("for i in range(0, len(prompts), 8):\n    model.generate(**tok(prompts[i:i + 8], padding=True))", False),
        ("for batch in prompts:\n    model.generate(**tok(batch, padding=True))", False),
        ("for p in chunked(prompts, 8):\n    model.generate(**tok(p, padding=True))", False),
        ("for t in [0.1, 0.9]:\n    model.generate(**enc, temperature=t)", False),
        ("for _ in range(5):\n    model.generate(**enc)", False),
        ("for i, p in enumerate(prompts):\n    model.generate(**enc, max_new_tokens=i)", False),
    ],
)
def test_generate_fed_one_prompt_per_call(loop: str, fed: bool) -> None:
    f = facts(GEN + loop)
    assert len(f.generates) == 1
    gen = f.generates[0]
    assert (gen.loop_line is not None) is fed
    assert gen.load is not None and gen.load.model_id == "a/b-1B"


@pytest.mark.parametrize(
    ("call", "static"),
    [
        ("model.generate(**enc)", False),
        ("model.generate(**enc, cache_implementation='static')", True),
        ("model.generate(**enc, cache_implementation=impl)", None),
        ("model.generate(**enc, generation_config=gc)", None),
        ("model.generate(**enc, past_key_values=StaticCache(config=c))", None),
    ],
)
def test_static_cache_per_call(call: str, static: bool | None) -> None:
    assert facts(GEN + call).generates[0].static_cache is static


@pytest.mark.parametrize(
    "line",
    [
        "model.forward = torch.compile(model.forward)",
        "model.generation_config.cache_implementation = 'static'",
        "gc = GenerationConfig(cache_implementation='static')",
    ],
)
def test_compiled_files(line: str) -> None:
    assert facts(GEN + line).compiles
    assert not facts(GEN + "model.generate(**enc)").compiles


def test_generate_links_to_its_own_model() -> None:
    f = facts(
        GEN + 'm2 = AutoModelForCausalLM.from_pretrained("c/d-7B")\nm2.generate(x)\nmodel.generate(x)\nz.generate(x)'
    )
    assert [g.load.model_id if g.load else None for g in f.generates] == ["c/d-7B", "a/b-1B", None]


def test_odd_code_does_not_break_the_scanner() -> None:
    f = facts("""
        a = b = A.from_pretrained("x/y-1B", load_in_8bit=True)
        (c, d) = 1, 2
        x: int = 3
        if (y := A.from_pretrained("x/y-3B", load_in_4bit=True)):
            pass
        lambda q: model.generate(q)
        async def g():
            async for p in prompts:
                await model.generate(p)
        class K:
            cfg = {"load_in_8bit": True}
        d = {k: v for k, v in {}.items()}
        cfg = {}
        cfg[key] = True
        x = cfg
        x = x
        A.from_pretrained("x/y-1B", quantization_config=x)
    """)
    assert [ld.model_id for ld in f.loads] == ["x/y-1B", "x/y-3B", "x/y-1B"]


@pytest.mark.parametrize(
    ("loop", "fed"),
    [
        ("prompts = load_prompts('p.jsonl')\nfor p in prompts:\n    model.generate(**tok(p))", True),
        ("for p in df['prompt'].tolist():\n    model.generate(**tok(p))", True),
        ("loader = DataLoader(ds, batch_size=8)\nfor x in loader:\n    model.generate(**tok(x))", False),
        ("for x in make_groups(prompts, batch_size=8):\n    model.generate(**tok(x))", False),
        ("for x in batched(prompts, 8):\n    model.generate(**tok(x))", False),
    ],
)
def test_loops_over_what_functions_return(loop: str, fed: bool) -> None:
    assert (facts(GEN + loop).generates[0].loop_line is not None) is fed
