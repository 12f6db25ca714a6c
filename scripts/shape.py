#!/usr/bin/env python3
"""The code's shape, counted: files over 800 lines (the option table aside), functions over
100 lines, `Result<_, String>` in signatures, import circles between the library's
top-level modules, `unsafe` outside the syscall boundary (the engines, the clock, the file
layer, the platform's halves) or without a SAFETY comment in the four lines above it, and a
`cfg` on the operating system outside a `platform/` folder and the door. Prints each count
and what makes it; exits 1 when a count is above the
ratchet in scripts/shape-ratchet.json (lower the ratchet as the code improves; never raise it
to let a regression in). Usage: scripts/shape.py [--update] (--update writes today's counts
as the ratchet)."""

import json
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "src")
RATCHET = os.path.join(ROOT, "scripts", "shape-ratchet.json")
# The option table is one row per fio option: long by nature.
LONG_FILE_EXEMPT = {"plan/options.rs"}
MAX_FILE = 800
MAX_FN = 100
# Where unsafe may be: the code that makes system calls and CPU instructions directly (the
# recorder's perf, ptrace and fork calls are all in trace/capture/platform/linux/sys.rs).
UNSAFE_BOUNDARY = (
    "engine/",
    "stats/clock.rs",
    "files/",
    "platform/",
    "trace/capture/platform/linux/sys.rs",
)


def rust_files():
    for d, _, names in os.walk(SRC):
        for n in sorted(names):
            if n.endswith(".rs"):
                p = os.path.join(d, n)
                yield os.path.relpath(p, SRC), open(p, encoding="utf-8").read().split("\n")


def code_lines(lines):
    """The lines before a file's unit tests (`#[cfg(test)]` at the top level)."""
    for i, l in enumerate(lines):
        if l.startswith("#[cfg(test)]"):
            return lines[:i]
    return lines


def long_functions(name, lines):
    """Functions whose body spans more than MAX_FN lines (rustfmt's layout: the closing brace
    is alone at the function's own indentation)."""
    out = []
    fn = re.compile(r"^(\s*)(pub(\([a-z]+\))? )?(const )?(unsafe )?(async )?fn (\w+)")
    for i, l in enumerate(lines):
        m = fn.match(l)
        if not m or l.rstrip().endswith(";"):
            continue
        indent = m.group(1)
        for j in range(i + 1, len(lines)):
            if lines[j] == indent + "}":
                if j - i + 1 > MAX_FN:
                    out.append(f"{name}:{i + 1} {m.group(7)} ({j - i + 1} lines)")
                break
    return out


def signatures(lines):
    """Each function's signature, joined onto one line (rustfmt splits long ones)."""
    for i, l in enumerate(lines):
        if re.match(r"^\s*(pub(\([a-z]+\))? )?(const )?(unsafe )?fn \w+", l):
            sig = []
            for j in range(i, min(i + 40, len(lines))):
                sig.append(lines[j].strip())
                if lines[j].rstrip().endswith("{") or lines[j].rstrip().endswith(";"):
                    break
            yield i, " ".join(sig)


def top_module(rel):
    """The library's top-level module a file belongs to (`plan/resolve/mod.rs` → plan)."""
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


BINARY = {"main", "commands", "session"}


def circles(files):
    """Strongly connected groups of the library's top-level modules by `crate::` imports."""
    edges = {}
    for rel, lines in files:
        m = top_module(rel)
        if m in BINARY or m == "lib":
            continue
        for l in code_lines(lines):
            for t in re.findall(r"crate::(\w+)", l):
                if t != m:
                    edges.setdefault(m, set()).add(t)
    # Tarjan's algorithm.
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def unsafe_uses(files):
    """Each `unsafe` (a block, fn or impl; comments aside) outside UNSAFE_BOUNDARY, or without
    a `SAFETY` comment in the four lines above it; tests included."""
    out = []
    for rel, lines in files:
        for i, l in enumerate(lines):
            code = l.split("//", 1)[0]
            if not re.search(r"\bunsafe\b", code):
                continue
            why = []
            if not rel.startswith(UNSAFE_BOUNDARY):
                why.append("outside the boundary")
            if not any("SAFETY" in x for x in lines[max(0, i - 4) : i + 1]):
                why.append("no SAFETY line")
            if why:
                out.append(f"{rel}:{i + 1} ({', '.join(why)})")
    return out


OS_CFG = re.compile(r"cfg!?\((.*\b)?(target_os|target_family|windows|unix)\b")


def os_cfgs(files):
    """Each `cfg` on the operating system outside a `platform/` folder and the door (main.rs):
    the platform's halves are the one place that asks which system it is built for."""
    return [
        f"{rel}:{i + 1}"
        for rel, lines in files
        if "platform/" not in rel and rel != "main.rs"
        for i, l in enumerate(lines)
        if OS_CFG.search(l.split("//", 1)[0])
    ]


def main():
    files = list(rust_files())
    long_files = [
        f"{rel} ({len(code_lines(lines))} lines)"
        for rel, lines in files
        if len(code_lines(lines)) > MAX_FILE and rel not in LONG_FILE_EXEMPT
    ]
    long_fns = [x for rel, lines in files for x in long_functions(rel, code_lines(lines))]
    string_results = [
        f"{rel}:{i + 1}"
        for rel, lines in files
        for i, sig in signatures(code_lines(lines))
        if re.search(r"->\s*Result<.*,\s*String\s*,?\s*>\s*(where|\{|;|$)", sig)
    ]
    circle_list = circles(files)
    unsafe_list = unsafe_uses(files)
    cfg_list = os_cfgs(files)
    counts = {
        "files_over_800_lines": len(long_files),
        "functions_over_100_lines": len(long_fns),
        "result_string_functions": len(string_results),
        "modules_in_import_circles": sum(len(c) for c in circle_list),
        "unsafe_outside_the_boundary_or_without_safety": len(unsafe_list),
        "os_cfg_outside_platform": len(cfg_list),
    }
    for title, items in [
        ("files over 800 lines", long_files),
        ("functions over 100 lines", long_fns),
        ("functions returning Result<_, String>", string_results),
        ("import circles", [" ↔ ".join(c) for c in circle_list]),
        ("unsafe outside the syscall boundary or without a SAFETY line", unsafe_list),
        ("cfg on the OS outside a platform/ folder and the door", cfg_list),
    ]:
        print(f"{title}: {len(items)}")
        for x in items:
            print(f"  {x}")
    if "--update" in sys.argv:
        with open(RATCHET, "w") as f:
            json.dump(counts, f, indent=2, sort_keys=True)
            f.write("\n")
        print(f"wrote {os.path.relpath(RATCHET, ROOT)}")
        return 0
    ratchet = json.load(open(RATCHET))
    worse = [f"{k}: {v} (ratchet {ratchet.get(k)})" for k, v in counts.items() if v > ratchet.get(k, 0)]
    better = [f"{k}: {v} (ratchet {ratchet.get(k)})" for k, v in counts.items() if v < ratchet.get(k, 0)]
    for b in better:
        print(f"shape: better than the ratchet, lower it (scripts/shape.py --update): {b}")
    if worse:
        for w in worse:
            print(f"shape: WORSE than the ratchet: {w}")
        return 1
    print("shape: within the ratchet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
