#!/usr/bin/env python3
"""check_function_length.py: fails when a function in the product's sources is longer than
the limit (LIMIT_LINES, counted from the first line of its signature to its closing brace)
and is not one of the long functions recorded in scripts/function_length_baseline.txt, or
when a recorded one has grown past its recorded length. So new code fits on a screen and
old long functions may only shrink. Run by the test suite (ctest: function_length).

  scripts/check_function_length.py                  check (exit 1, one line per violation)
  scripts/check_function_length.py --list           print every function over the limit
  scripts/check_function_length.py --write-baseline record today's long functions

Functions are found by a small C++ scanner, not a compiler: comments, string and character
literals and preprocessor lines are blanked first; a brace block whose enclosing blocks are
all namespaces, classes or structs and whose head (the text since the previous ';', '{' or
'}') holds a '(' and no '=' is a function body; a constructor's brace-initialised members
(`: a_{x}, b_{y} {`) belong to the body that follows them. A function is named by its
file and the identifier before the head's first '(' (with `#2`, `#3` for later functions of
the same name in the file).
"""
import os
import re
import sys

LIMIT_LINES = 60
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_DIRS = ("kernels", "io", "engine", "workloads")
BASELINE = os.path.join(ROOT, "scripts", "function_length_baseline.txt")


def blank_non_code(text):
    """Replaces comments, literals and preprocessor lines by spaces, keeping newlines."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # preprocessor line, with continuations
            while i < n:
                if text[i] == "\n" and (i == 0 or text[i - 1] != "\\"):
                    break
                out.append("\n" if text[i] == "\n" else " ")
                i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.extend("\n" if ch == "\n" else " " for ch in text[i:end])
            i = end
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(', text[i:i + 24])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = ")" + raw.group(1) + '"'
            end = text.find(close, i + raw.end())
            end = n if end < 0 else end + len(close)
            out.extend("\n" if ch == "\n" else " " for ch in text[i:end])
            i = end
            continue
        if c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n - 1) - i - 1) + c if j < n else " " * (j - i))
            i = j + 1
            continue
        if c == "\n":
            line_start = True
        out.append(c)
        i += 1
    return "".join(out)


def head_kind(head):
    h = re.sub(r"\btemplate\s*<[^{};]*>", " ", head).strip()
    if re.match(r"(inline\s+)?namespace\b", h) or re.match(r"extern\b", h):
        return "scope"
    if re.match(r"(typedef\s+)?(class|struct|union|enum)\b", h) and "(" not in h.split(":")[0]:
        return "scope"
    if "(" in h and "=" not in re.sub(r"operator\s*[^\s(]+", "", h.split("(")[0]) and \
            not re.match(r"(if|for|while|switch|catch|do|else|return)\b", h):
        return "function"
    return "other"


def function_name(head):
    pre = head.split("(")[0] if not re.search(r"\boperator\b", head) else None
    if pre is None:
        m = re.search(r"([\w:~]*operator\s*(\(\)|[^\s(]+))\s*\(", head)
        return re.sub(r"\s+", "", m.group(1)) if m else "operator"
    m = re.search(r"([~\w][\w:~]*)\s*$", pre)
    return m.group(1) if m else "?"


def functions(path):
    """Yields (name, first_line, last_line) for each function body in the file."""
    code = blank_non_code(open(path, encoding="utf-8", errors="replace").read())
    stack = []  # kinds of the open blocks
    head_start = 0
    pending = None  # (name, first_line) of a function whose member initialisers are open
    i, n = 0, len(code)
    line_of = lambda pos: code.count("\n", 0, pos) + 1
    while i < n:
        c = code[i]
        if c in ";{}":
            if c == "{":
                eligible = all(k == "scope" for k in stack)
                head = code[head_start:i]
                kind = head_kind(head) if eligible else "inner"
                if eligible and pending is not None:
                    kind = "function"
                elif kind == "function":
                    first = head_start + len(head) - len(head.lstrip())
                    pending = (function_name(head), line_of(first))
                stack.append(kind)
            elif c == "}":
                kind = stack.pop() if stack else "other"
                if kind == "function" and all(k == "scope" for k in stack):
                    j = i + 1
                    while j < n and code[j] in " \t\n":
                        j += 1
                    if j < n and code[j] in ",{":  # a member initialiser: the body follows
                        i = j
                        head_start = j
                        continue
                    yield pending[0], pending[1], line_of(i)
                    pending = None
            else:
                pending = None if all(k == "scope" for k in stack) else pending
            head_start = i + 1
        i += 1


def long_functions():
    found = {}
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)
                seen = {}
                for fname, first, last in functions(path):
                    seen[fname] = seen.get(fname, 0) + 1
                    key = f"{rel}:{fname}" + (f"#{seen[fname]}" if seen[fname] > 1 else "")
                    lines = last - first + 1
                    if lines > LIMIT_LINES:
                        found[key] = (lines, first)
    return found


def read_baseline():
    recorded = {}
    if os.path.exists(BASELINE):
        for line in open(BASELINE, encoding="utf-8"):
            line = line.strip()
            if line and not line.startswith("#"):
                key, lines = line.rsplit(" ", 1)
                recorded[key] = int(lines)
    return recorded


def main(argv):
    found = long_functions()
    if "--list" in argv:
        for key, (lines, first) in sorted(found.items(), key=lambda kv: -kv[1][0]):
            print(f"{lines:5d}  {key} (line {first})")
        return 0
    if "--write-baseline" in argv:
        with open(BASELINE, "w", encoding="utf-8") as out:
            out.write(f"# Functions longer than {LIMIT_LINES} lines when the limit came in: "
                      "they may shrink, not grow.\n# Written by scripts/check_function_length.py "
                      "--write-baseline; one 'path:function length' per line.\n")
            for key in sorted(found):
                out.write(f"{key} {found[key][0]}\n")
        print(f"{len(found)} functions recorded in {os.path.relpath(BASELINE, ROOT)}")
        return 0
    recorded = read_baseline()
    bad = 0
    for key, (lines, first) in sorted(found.items()):
        if key not in recorded:
            print(f"function_length: {key} (line {first}) is {lines} lines, over the limit of "
                  f"{LIMIT_LINES}: split it")
            bad = 1
        elif lines > recorded[key]:
            print(f"function_length: {key} (line {first}) grew to {lines} lines from "
                  f"{recorded[key]} (over the limit of {LIMIT_LINES}): split it")
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
