#!/usr/bin/env python3
"""values.py: the small readers of result values that the study scripts share.

get(obj, *keys): obj[k0][k1]..., None when a key is missing. med(v): the median of a
{median, ...} timing summary, or the plain number; None for anything else. median(list):
the median of the numbers in a list (bools and non-numbers left out), None when none.
number(v): v if it is a number (not a bool), else None. quotient(a, b): a / b of two numbers,
None when either is not one or b is 0. samples(list): the {samples, median, min, max, count}
figure of the numbers in a list (the form report.py compares), None when none.
Python 3 standard library only.
"""


def get(obj, *keys):
    for k in keys:
        if isinstance(obj, dict) and k in obj:
            obj = obj[k]
        else:
            return None
    return obj


def med(v):
    v = v.get("median") if isinstance(v, dict) else v
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def median(v):
    v = sorted(x for x in v if isinstance(x, (int, float)) and not isinstance(x, bool))
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def number(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def quotient(a, b):
    a, b = number(a), number(b)
    return None if a is None or not b else a / b


def samples(v):
    v = [x for x in (number(y) for y in v) if x is not None]
    if not v:
        return None
    return {"samples": v, "median": median(v), "min": min(v), "max": max(v), "count": len(v)}
