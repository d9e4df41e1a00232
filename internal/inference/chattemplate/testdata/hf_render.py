#!/usr/bin/env python3
"""Renders the golden cases (cases.json) the way Hugging Face's
apply_chat_template does, into golden/NAME.txt.

The environment is transformers' own: a sandboxed Jinja2 environment with
trim_blocks and lstrip_blocks on, the loopcontrols extension, a tojson
filter that is json.dumps with its default separators and insertion-ordered
keys (ensure_ascii off), and the raise_exception and strftime_now globals.
The variables are built as chattemplate.Render builds them, so the Go test
compares gonja's output with Jinja2's on the same input.

Run from this directory: python3 hf_render.py (needs Jinja2 3.x).
"""
import json
import os

from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class Raised(Exception):
    pass


def raise_exception(message):
    raise Raised(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def variables(case):
    messages = []
    for m in case["messages"]:
        d = {"role": m["role"], "content": m.get("content", "")}
        if m.get("name"):
            d["name"] = m["name"]
        if m.get("tool_call"):
            d["tool_calls"] = [{"type": "function", "function": {
                "name": m["tool_call"]["name"], "arguments": m["tool_call"]["arguments"]}}]
        messages.append(d)
    v = {
        "messages": messages,
        "bos_token": case.get("bos", ""),
        "eos_token": case.get("eos", ""),
        "add_generation_prompt": case.get("add_generation_prompt", False),
    }
    if case.get("tools"):
        tools = []
        for t in case["tools"]:
            fn = {"name": t["name"], "description": t.get("description", "")}
            if t.get("parameters") is not None:
                fn["parameters"] = t["parameters"]
            tools.append({"type": "function", "function": fn})
        v["tools"] = tools
    return v


def main():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    with open("cases.json", encoding="utf-8") as f:
        cases = json.load(f)
    os.makedirs("golden", exist_ok=True)
    for case in cases:
        with open(case["template"], encoding="utf-8") as f:
            source = f.read()
        try:
            out = env.from_string(source).render(**variables(case))
        except Raised as e:
            out = "raise_exception: " + str(e)
        with open(os.path.join("golden", case["name"] + ".txt"), "w", encoding="utf-8", newline="") as f:
            f.write(out)


if __name__ == "__main__":
    main()
