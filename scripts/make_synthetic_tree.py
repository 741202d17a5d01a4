#!/usr/bin/env python3
"""Writes a synthetic parameter tree of N tensors (default 1,000,000) and a matching rule file.

    scripts/make_synthetic_tree.py OUT_DIR [--tensors N]
      -> OUT_DIR/synthetic_tree.json   (the `easyplan tree --format json` shape, HF names and torch shapes)
         OUT_DIR/synthetic_rules.yaml  (an HF-layout rule file: presets, literal axes, a catch-all)

The model is a deep decoder: each layer has a dozen tensor kinds (attention projections, q/k norms, a
gated MLP, an MoE router and its bias, two layernorms, an FP8 weight and its block scale), in bfloat16,
float32 and float8. Layers cycle through four widths, and one width in twelve is deliberately not
divisible by common mesh axis sizes, so the tree holds a few dozen distinct shapes and exercises both
sharded and corrected (replicated) dims. Embeddings, the final norm and lm_head complete the count.
Output is deterministic.
"""

import argparse
import os
import sys

# Per layer-width variant: hidden, intermediate, heads * head_dim, kv_heads * head_dim, experts.
VARIANTS = [
    (4096, 14336, 4096, 1024, 64),
    (5120, 13824, 5120, 1024, 64),
    (3072, 8192, 3072, 768, 32),
    (4100, 11000, 4100, 1025, 60),  # widths that do not divide by 8 or 16: corrected to replicated
]
VOCAB = 128256
FP8_BLOCK = 128

RULES = """\
# Rules for scripts/make_synthetic_tree.py's tree (HF layout, torch [out, in] weights), for scripts/bench.
layout: hf
rules:
  - {match: '\\.weight_scale_inv$', spec: Replicated}
  - {match: 'embed_tokens\\.weight$', spec: [[fsdp, sp], tp]}
  - {match: 'self_attn\\.(q_proj|k_proj|v_proj)\\.weight$', spec: [tp, [fsdp, sp]]}
  - {match: 'self_attn\\.o_proj\\.weight$', spec: [[fsdp, sp], tp]}
  - {match: 'self_attn\\.(q_norm|k_norm)\\.weight$', spec: Replicated}
  - {match: 'mlp\\.(gate_proj|up_proj)\\.weight$', spec: [tp, [fsdp, sp]]}
  - {match: 'mlp\\.down_proj\\.weight$', spec: [[fsdp, sp], tp]}
  - {match: 'mlp\\.gate\\.weight$', spec: [ep, [fsdp, sp]]}
  - {match: 'mlp\\.gate\\.e_score_correction_bias$', spec: Replicated}
  - {match: 'layernorm\\.weight$', spec: Replicated}
  - {match: 'norm\\.weight$', spec: Replicated}
  - {match: 'lm_head\\.weight$', spec: [tp, [fsdp, sp]]}
  - {match: '.*', spec: Replicated}
"""


def layer_tensors(layer):
    hidden, inter, q, kv, experts = VARIANTS[3 if layer % 12 == 11 else layer % 3]
    head_dim = 128
    p = f"model.layers.{layer}."
    blocks = lambda n: -(-n // FP8_BLOCK)  # noqa: E731
    return [
        (p + "self_attn.q_proj.weight", [q, hidden], "bfloat16", None),
        (p + "self_attn.k_proj.weight", [kv, hidden], "bfloat16", None),
        (p + "self_attn.v_proj.weight", [kv, hidden], "bfloat16", None),
        (p + "self_attn.o_proj.weight", [hidden, q], "bfloat16", None),
        (p + "self_attn.q_norm.weight", [head_dim], "float32", None),
        (p + "self_attn.k_norm.weight", [head_dim], "float32", None),
        (p + "mlp.gate_proj.weight", [inter, hidden], "float8_e4m3fn", None),
        (p + "mlp.gate_proj.weight_scale_inv", [blocks(inter), blocks(hidden)], "float32", "scale"),
        (p + "mlp.up_proj.weight", [inter, hidden], "bfloat16", None),
        (p + "mlp.down_proj.weight", [hidden, inter], "bfloat16", None),
        (p + "mlp.gate.weight", [experts, hidden], "bfloat16", None),
        (p + "mlp.gate.e_score_correction_bias", [experts], "float32", "buffer"),
        (p + "input_layernorm.weight", [hidden], "bfloat16", None),
        (p + "post_attention_layernorm.weight", [hidden], "bfloat16", None),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--tensors", type=int, default=1_000_000)
    args = parser.parse_args()
    if args.tensors < 3:
        sys.exit("make_synthetic_tree: --tensors must be at least 3")
    os.makedirs(args.out_dir, exist_ok=True)

    hidden = VARIANTS[0][0]
    head = [("model.embed_tokens.weight", [VOCAB, hidden], "bfloat16", None)]
    tail = [("model.norm.weight", [hidden], "bfloat16", None), ("lm_head.weight", [VOCAB, hidden], "bfloat16", None)]
    body = args.tensors - len(head) - len(tail)

    tree_path = os.path.join(args.out_dir, "synthetic_tree.json")
    with open(tree_path, "w") as out:
        out.write('{\n  "model_type": "synthetic",\n  "layout": "hf",\n  "params": [')
        first = True

        def write(tensor):
            nonlocal first
            name, shape, dtype, role = tensor
            out.write("\n    " if first else ",\n    ")
            first = False
            role_text = f', "role": "{role}"' if role else ""
            out.write(f'{{"name": "{name}", "shape": [{", ".join(map(str, shape))}], "dtype": "{dtype}"{role_text}}}')

        for tensor in head:
            write(tensor)
        layer = written = 0
        while written < body:
            for tensor in layer_tensors(layer)[: body - written]:
                write(tensor)
                written += 1
            layer += 1
        for tensor in tail:
            write(tensor)
        out.write("\n  ]\n}\n")

    rules_path = os.path.join(args.out_dir, "synthetic_rules.yaml")
    with open(rules_path, "w") as out:
        out.write(RULES)
    print(f"{tree_path}: {args.tensors:,} tensors in {layer:,} layers; {rules_path}")


if __name__ == "__main__":
    main()
