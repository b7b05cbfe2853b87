"""Cutting a long module into parts that LLVM compiles at the same time, a core each.

LLVM's time grows with a module's length and one compile keeps one core busy: a
transformer's training step (~12,000 lines, 124 entry points) took ~7 s on one core of
two. A module is cut when each part's estimated LLVM time pays for what a part adds
(PART_S), into at most the parts the caller has cores for. The functions a program calls
by name (the groups' entries: external linkage) share nothing but the internal functions
they call and the module's declarations, so the module cuts into parts: each has some of
the entries, every internal function they reach (copied where two parts reach one) and
every line outside a function body (declarations, attribute groups, metadata; LLVM drops
what a part does not use). Entries that call each other stay in one part; a module with
global variables is not cut (a part would get a copy of its own).
"""
import re

LINE_S = 0.15e-3    # LLVM's CPU seconds (O3 and emission) a line of function bodies: 0.70 s
                    # for a deep MLP step's 4,999, 0.92 s for the matmul library's 4,300
PART_S = 0.3        # what a part costs beyond its lines: a second engine to load and, the
                    # first time, a compile worker process to start
_NAME = re.compile(r'@"?([-\w.$]+)')    # (LLVM quotes a name or not: the same name)
_LOCAL = re.compile(r"define (?:internal|private) ")


def seconds(lines):
    """LLVM's estimated CPU seconds for `lines` lines of function bodies."""
    return lines * LINE_S


def cores(estimate):
    """The parts (so cores) a module of `estimate` LLVM seconds would be cut into given the
    cores for them: 1 when too short to pay for a second part."""
    return int(estimate // PART_S) if estimate >= 2 * PART_S else 1


def parts(text, most):
    """The texts of at most `most` parts of module `text`, balanced by lines, as many as
    pay for themselves (each at least PART_S of estimated LLVM time); [text] if it is too
    short to cut or cannot be cut."""
    cut = _cut(text) if most >= 2 and cores(seconds(text.count("\n"))) >= 2 else None
    if cut is None:
        return [text]
    items, defines, calls, groups = cut
    weight = {g: sum(len(defines[n]) for n in _reach(members, calls))
              for g, members in groups.items()}
    total = seconds(sum(len(body) for body in defines.values()))
    for k in range(min(most, len(groups), cores(total)), 1, -1):
        bins = [[0, set()] for _ in range(k)]
        for g in sorted(groups, key=lambda g: -weight[g]):
            lightest = min(bins, key=lambda b: b[0])
            lightest[0] += weight[g]
            lightest[1] |= groups[g]
        kept = [_reach(members, calls) for _, members in bins]
        if seconds(min(sum(len(defines[n]) for n in names) for names in kept)) >= PART_S:
            return [_text(items, names) for names in kept]
    return [text]


def pieces(text):
    """{entries: module text} for each group of entries that can be cut apart, however
    short (to see where a module's LLVM time goes); {(): text} if it cannot be cut."""
    cut = _cut(text)
    if cut is None:
        return {(): text}
    items, _, calls, groups = cut
    return {tuple(sorted(members)): _text(items, _reach(members, calls))
            for members in groups.values()}


def _cut(text):
    """(items, {name: definition}, {name: names of definitions it refers to}, groups of
    entries), or None for a module with a global variable."""
    items = _items(text)
    if any(not isinstance(item, list) and item.startswith("@") for item in items):
        return None                 # a global variable: one copy only
    defines = {_NAME.search(item[0]).group(1): item for item in items if isinstance(item, list)}
    calls = {name: {c for c in _NAME.findall("\n".join(body[1:])) if c in defines}
             for name, body in defines.items()}
    entries = [name for name, body in defines.items() if not _LOCAL.match(body[0])]
    return items, defines, calls, _together(entries, calls)


def _items(text):
    """The module as a list of lines outside functions (str) and function definitions
    (lists of lines, from `define` to the closing brace)."""
    items, body = [], None
    for line in text.split("\n"):
        if body is not None:
            body.append(line)
            if line == "}":
                body = None
        elif line.startswith("define "):
            body = [line]
            items.append(body)
        else:
            items.append(line)
    return items


def _reach(names, calls):
    seen, todo = set(names), list(names)
    while todo:
        for callee in calls[todo.pop()]:
            if callee not in seen:
                seen.add(callee)
                todo.append(callee)
    return seen


def _together(entries, calls):
    """Entries grouped so that no entry reaches another's group: {group id: entries}."""
    group = {name: name for name in entries}

    def root(name):
        while group[name] != name:
            name = group[name]
        return name
    for name in entries:
        for other in _reach([name], calls) & group.keys():
            group[root(other)] = root(name)
    groups = {}
    for name in entries:
        groups.setdefault(root(name), set()).add(name)
    return groups


def _text(items, keep):
    return "\n".join(line for item in items for line in (
        (item if _NAME.search(item[0]).group(1) in keep else ()) if isinstance(item, list)
        else (item,)))
