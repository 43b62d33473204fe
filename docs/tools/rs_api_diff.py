#!/usr/bin/env python3
"""ReactiveSwift 7.2.1 ↔ Mailbox public API diff.

Reads two symbol graphs (made by `swift-symbolgraph-extract`, see `rs-api-diff.sh`), lists every
public symbol of ReactiveSwift with a normalised signature, looks for the same symbol in Mailbox,
and writes the table `docs/ReactiveSwiftAPI.md`.

A signature is: the symbol's path (type and member name with argument labels), its kind, the
parameter types (argument labels kept, internal names and default values dropped — a default is
kept as `=`), the result type, and every generic constraint (the extension's and the
declaration's), with the declaration's own generic parameters renamed by position.
Two spellings of the same type are made equal (`Disposable?` / `(any Disposable)?`,
`Signal<V, E>.Event` / `Event<V, E>`, …).

Every ReactiveSwift symbol ends up in one row with a status:
- `present`: Mailbox has the same signature.
- `present (Swift 6)`: the same once `@Sendable` and `Sendable`/`SendableMetatype` requirements
  are ignored — the documented Swift 6 differences (docs/StreamContracts.md).
- `added`: as `present`, but not in the baseline graph (`--baseline`: main's Mailbox before this
  change).
- anything else comes from `rs_api_notes.py`: `compatible` (Mailbox's signature differs in a way
  call sites do not see, with the reason) or `not provided` (with the reason and the
  replacement).

Exit status 1 when a ReactiveSwift symbol has no status (neither matched nor explained in the
notes), or a note is stale (it explains a symbol that now matches, or no symbol at all), so the
table cannot silently go wrong.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rs_api_notes  # noqa: E402

# --------------------------------------------------------------------------------------------
# Loading


def load_graph(directory: str, module: str) -> list[dict]:
    """Every symbol of `module`'s graphs in `directory` (the main graph and its extension graphs)."""
    symbols = []
    for name in sorted(os.listdir(directory)):
        if not (name == f"{module}.symbols.json" or name.startswith(f"{module}@")):
            continue
        with open(os.path.join(directory, name)) as f:
            graph = json.load(f)
        for symbol in graph["symbols"]:
            precise = symbol["identifier"]["precise"]
            if "::SYNTHESIZED::" in precise:
                origin = precise.split("::SYNTHESIZED::")[0]
                # Members a type gets from a standard-library protocol (a `Bag`'s `Sequence`
                # methods) are not the module's API.
                if not origin.startswith(module_usr_prefix(module)):
                    continue
                symbol["_synthesized"] = True
            else:
                symbol["_synthesized"] = False
            symbols.append(symbol)
    return symbols


def module_usr_prefix(module: str) -> str:
    return f"s:{len(module)}{module}"


# --------------------------------------------------------------------------------------------
# Normalising a declaration


def split_top(text: str, sep: str = ",") -> list[str]:
    """Splits at `sep` outside brackets."""
    parts, depth, current = [], 0, ""
    i = 0
    while i < len(text):
        c = text[i]
        if c in "([<{":
            depth += 1
        elif c in ")]>}":
            # `->` is not a closing bracket.
            if not (c == ">" and i > 0 and text[i - 1] == "-"):
                depth -= 1
        if depth == 0 and text.startswith(sep, i):
            parts.append(current)
            current = ""
            i += len(sep)
            continue
        current += c
        i += 1
    parts.append(current)
    return [p.strip() for p in parts if p.strip() != ""]


def matching_close(text: str, start: int) -> int:
    """Index of the bracket closing the one at `start`."""
    opening = text[start]
    closing = {"(": ")", "<": ">", "[": "]", "{": "}"}[opening]
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c in "([<{":
            depth += 1
        elif c in ")]>}":
            if c == ">" and i > 0 and text[i - 1] == "-":
                continue
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced {opening} in {text!r}")


ATTRIBUTES = [
    "@discardableResult", "@inlinable", "@inline(__always)", "@usableFromInline",
    "@_disfavoredOverload", "@escaping", "@preconcurrency",
]
KEYWORDS = ["convenience ", "final ", "public ", "open ", "override ", "required ", "nonisolated ", "dynamic "]

TYPE_ALIASES = [
    # Spelled differently, the same type.
    (r"\bSignalProducer<([^<>]*)>\.ProducedSignal\.Event\b", r"Event<\1>"),
    (r"\bProducedSignal\.Event\b", r"Event<Value, Error>"),
    (r"\bProducedSignal\b", r"Signal<Value, Error>"),
    (r"\bSignal<([^<>]*)>\.Observer\.Action\b", r"(Event<\1>) -> Void"),
    (r"\bSignal\.Observer\.Action\b", r"(Event<Value, Error>) -> Void"),
    (r"\bObserver\.Action\b", r"(Event<Value, Error>) -> Void"),
    (r"\b(?:Signal|SignalProducer)<([^<>]*)>\.Event\b", r"Event<\1>"),
    (r"\bSignal<([^<>]*)>\.Observer\b", r"Observer<\1>"),
    (r"\bProducer\b", r"SignalProducer<Value, Error>"),
    # `S.Iterator.Element` is `S.Element`.
    (r"\.Iterator\.Element\b", r".Element"),
    (r"\bAction<([^<>]*)>\.Execute\b", r"Execute<\1>"),
]


def normalise_type(text: str, sendable: bool) -> str:
    """A type's spelling, made comparable."""
    t = text
    t = re.sub(r"\bany (Swift\.)?Error\b", "AnyError", t)
    for prefix in ("Swift.", "ReactiveSwift.", "Mailbox.", "Foundation.", "Dispatch.", "Self."):
        t = t.replace(prefix, "")
    for attribute in ATTRIBUTES:
        t = t.replace(attribute + " ", "").replace(attribute, "")
    if not sendable:
        t = t.replace("@Sendable ", "").replace("@Sendable", "")
        t = re.sub(r" & (Sendable|SendableMetatype)\b", "", t)
    # The existential `Swift.Error` (`any Error`) is not the generic parameter `Error`.
    t = re.sub(r"\bany (Swift\.)?Error\b", "AnyError", t)
    t = re.sub(r"\bany ", "", t)
    for pattern, replacement in TYPE_ALIASES:
        t = re.sub(pattern, replacement, t)
    # `(X)?` → `X?` for a parenthesised plain type (not a function type or tuple).
    t = re.sub(r"\(([A-Za-z_][\w.]*(?:<[^()]*>)?)\)([?!])", r"\1\2", t)
    t = re.sub(r"\s+", " ", t).strip()
    return t


def parse_generic_clause(clause: str) -> tuple[list[str], list[str]]:
    """`<A, B: P>` (without brackets) → names, inline constraints."""
    names, constraints = [], []
    for part in split_top(clause):
        if ":" in part:
            name, requirement = part.split(":", 1)
            names.append(name.strip())
            for r in requirement.split("&"):
                constraints.append(f"{name.strip()} : {r.strip()}")
        else:
            names.append(part.strip())
    return names, constraints


def normalise_constraint(text: str, sendable: bool) -> str | None:
    text = text.strip()
    if "==" in text:
        lhs, rhs = [normalise_type(x, sendable) for x in text.split("==", 1)]
        lhs, rhs = sorted([lhs, rhs])
        return f"{lhs} == {rhs}"
    if ":" in text:
        lhs, rhs = [normalise_type(x, sendable) for x in text.split(":", 1)]
        if rhs in ("Copyable", "Escapable"):
            return None
        if rhs == "Error" and re.fullmatch(r"\w+", lhs):
            # A generic parameter used as an error type must conform to `Swift.Error` in
            # both modules: implied by its use.
            return None
        if not sendable and rhs in ("Sendable", "SendableMetatype"):
            return None
        return f"{lhs} : {rhs}"
    return normalise_type(text, sendable)


def extension_constraints(symbol: dict) -> list[str]:
    out = []
    for c in symbol.get("swiftExtension", {}).get("constraints", []) or []:
        op = "==" if c["kind"] == "sameType" else ":"
        out.append(f"{c['lhs']} {op} {c['rhs']}")
    return out


# ReactiveSwift paths whose symbols Mailbox declares elsewhere, under a name that spells the
# same type: `Signal<V, E>.Event` is a type alias of the top-level `Event<V, E>` in Mailbox.
PATH_ALIASES = [("Signal.Event", "Event")]


def split_where(key: str) -> tuple[str, frozenset]:
    """A signature without its constraints, and the constraints."""
    if " where " in key:
        head, constraints = key.split(" where ", 1)
        return head, frozenset(split_top(constraints))
    return key, frozenset()


class Decl:
    """A normalised declaration: `key` compares signatures; `path` compares names."""

    def __init__(self, symbol: dict, module: str):
        self.symbol = symbol
        self.module = module
        self.kind = symbol["kind"]["identifier"]
        self.display_path = ".".join(symbol["pathComponents"])
        self.path = self.display_path
        if module == "ReactiveSwift":
            for alias, replacement in PATH_ALIASES:
                if self.path == alias or self.path.startswith(alias + "."):
                    self.path = replacement + self.path[len(alias):]
        self.raw = "".join(f["spelling"] for f in symbol["declarationFragments"])
        self.synthesized = symbol["_synthesized"]
        availability = symbol.get("availability") or []
        self.deprecated = any(a.get("isUnconditionallyDeprecated") or a.get("deprecated") for a in availability)
        self.deprecation_message = next((a.get("message") for a in availability if a.get("message")), None)
        self.file = os.path.basename(
            (symbol.get("location") or {}).get("uri") or (symbol.get("docComment") or {}).get("uri") or "?"
        )
        try:
            self.strict = self._normalise(sendable=True)
            self.loose = self._normalise(sendable=False)
        except ValueError:
            if module == "ReactiveSwift":
                raise
            # A Mailbox-only kind of declaration: compared as text (it matches nothing).
            self.strict = self.loose = f"{self.kind} {self.path} {self.raw}"

    @property
    def owner(self) -> str:
        return ".".join(self.symbol["pathComponents"][:-1])

    def _normalise(self, sendable: bool) -> str:
        d = self.raw
        for attribute in ATTRIBUTES:
            d = d.replace(attribute + " ", "").replace(attribute, "")
        for keyword in KEYWORDS:
            d = d.replace(keyword, "")
        d = d.strip()
        constraints = [normalise_constraint(c, sendable) for c in extension_constraints(self.symbol)]
        if self.kind in ("swift.class", "swift.struct", "swift.enum", "swift.protocol", "swift.associatedtype"):
            return f"type {self.path}"
        if self.kind == "swift.enum.case":
            return f"case {self.path}"
        if self.kind == "swift.typealias":
            target = d.split("=", 1)[1] if "=" in d else ""
            return f"typealias {self.path} = {normalise_type(target, sendable)}"
        if self.kind in ("swift.property", "swift.type.property", "swift.var"):
            static = "static " if re.match(r"^(static|class) ", d) else ""
            m = re.match(r"^(?:(?:static|class) )?(?:let|var) ([^:]+): (.*?)(?: \{ get(?: set)? \})?$", d)
            if not m:
                raise ValueError(f"unparsed property {d!r}")
            name, type_ = m.group(1), m.group(2)
            settable = "{ get set }" in d or (d.startswith("var ") and "{" not in d) or (d.startswith("static var ") and "{" not in d)
            return f"{static}var {self.path}: {normalise_type(type_, sendable)}{' { set }' if settable else ''}" + where_suffix(constraints)
        # Functions, initialisers, operators, subscripts.
        m = re.match(r"^((?:@MainActor |static |class |mutating )*)(func|init[?!]?|subscript)\s*(.*)$", d)
        if not m:
            raise ValueError(f"unparsed declaration {d!r}")
        modifiers, introducer, rest = m.group(1).strip(), m.group(2), m.group(3)
        # Name, then an optional generic clause, then the parameter list.
        generics, generic_constraints = [], []
        if introducer == "func":
            name_match = re.match(r"^(`?[^\s(<`]+`?|[^\sA-Za-z_(]+)\s*", rest)
            rest = rest[name_match.end():]
        if rest.startswith("<"):
            close = matching_close(rest, 0)
            generics, generic_constraints = parse_generic_clause(rest[1:close])
            rest = rest[close + 1:].lstrip()
        if not rest.startswith("("):
            raise ValueError(f"no parameter list in {d!r}")
        close = matching_close(rest, 0)
        params_text, tail = rest[1:close], rest[close + 1:]
        where = []
        if " where " in tail:
            tail, where_text = tail.split(" where ", 1)
            where = split_top(where_text)
        tail = tail.strip()
        effects = ""
        if tail.startswith("async"):
            effects += " async"
            tail = tail[len("async"):].lstrip()
        rethrows = tail.startswith("rethrows")
        if rethrows or tail.startswith("throws"):
            effects += " throws"
            tail = re.sub(r"^(rethrows|throws(\([^)]*\))?)\s*", "", tail)
        result = ""
        if tail.startswith("->"):
            result = normalise_type(tail[2:], sendable)
        params = []
        for p in split_top(params_text):
            default = ""
            top = split_top(p, " = ")
            if len(top) > 1:
                p, default = top[0], "="
            head, type_ = p.split(":", 1)
            words = head.split()
            label = words[0]
            type_ = normalise_type(type_.replace("inout ", "inout "), sendable)
            params.append(f"{label}: {type_}{default}")
        if rethrows and not sendable:
            # `rethrows` with throwing closure parameters accepts every non-throwing closure a
            # ReactiveSwift caller passes: compare as if neither threw.
            effects = effects.replace(" throws", "")
            params = [p.replace(" throws ->", " ->") for p in params]
        signature = f"{modifiers + ' ' if modifiers else ''}{introducer} {self.path}({', '.join(params)}){effects}"
        if result:
            signature += f" -> {result}"
        constraints += [normalise_constraint(c, sendable) for c in generic_constraints + where]
        # Rename the declaration's own generic parameters by position.
        for index, name in enumerate(generics):
            pattern = rf"(?<![\w.]){re.escape(name)}\b"
            signature = re.sub(pattern, f"T{index}", signature)
            constraints = [re.sub(pattern, f"T{index}", c) if c else c for c in constraints]
        # Re-sort (renaming may reorder), and sort the sides of same-type constraints again.
        constraints = [normalise_constraint(c, True) if c and "==" in c else c for c in constraints]
        return signature + where_suffix(constraints)


def where_suffix(constraints: list[str | None]) -> str:
    unique = sorted(set(c for c in constraints if c))
    return f" where {', '.join(unique)}" if unique else ""


# --------------------------------------------------------------------------------------------
# Matching


class Matcher:
    """Finds a ReactiveSwift declaration among one module's declarations."""

    def __init__(self, decls: list[Decl]):
        self.strict = {d.strict for d in decls}
        self.loose = {d.loose for d in decls}
        # Signature without constraints → constraint sets: a declaration with fewer
        # constraints is more general and serves every call of a more constrained one.
        self.general = collections.defaultdict(list)
        for d in decls:
            head, constraints = split_where(d.loose)
            self.general[head].append(constraints)

    def status(self, decl: Decl) -> str | None:
        if decl.strict in self.strict:
            return "present"
        if decl.loose in self.loose:
            return "present (Swift 6)"
        head, constraints = split_where(decl.loose)
        if any(c <= constraints for c in self.general.get(head, [])):
            return "present (more general)"
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reactiveswift", required=True, help="directory of ReactiveSwift's symbol graphs")
    parser.add_argument("--mailbox", required=True, help="directory of Mailbox's symbol graphs")
    parser.add_argument("--baseline", help="directory of the baseline Mailbox's symbol graphs (for `added`)")
    parser.add_argument("--baseline-name", default="main", help="how the table names the baseline")
    parser.add_argument("--output", help="the Markdown table to write")
    parser.add_argument("--dump", action="store_true", help="print every normalised signature and exit")
    args = parser.parse_args()

    rs = [Decl(s, "ReactiveSwift") for s in load_graph(args.reactiveswift, "ReactiveSwift")]
    mb = [Decl(s, "Mailbox") for s in load_graph(args.mailbox, "Mailbox")]
    base = [Decl(s, "Mailbox") for s in load_graph(args.baseline, "Mailbox")] if args.baseline else None

    if args.dump:
        for d in sorted(rs, key=lambda d: d.path):
            print("RS", d.loose)
        for d in sorted(mb, key=lambda d: d.path):
            print("MB", d.loose)
        return 0

    match = Matcher(mb)
    base_match = Matcher(base) if base is not None else None
    mb_paths = collections.defaultdict(list)
    for d in mb:
        mb_paths[d.path].append(d)
    mb_types = {d.path for d in mb if d.kind.startswith("swift.") and d.strict.startswith("type ")}

    notes = rs_api_notes.NOTES
    used_notes = set()

    def find_note(decl: Decl):
        for index, note in enumerate(notes):
            pattern = note["symbol"]
            if pattern == decl.path or pattern == decl.loose or (
                pattern.endswith("*") and decl.path.startswith(pattern[:-1])
            ) or (note.get("signature") and note["symbol"] == decl.path and note["signature"] in decl.loose):
                if note.get("signature") and note["signature"] not in decl.loose:
                    continue
                used_notes.add(index)
                return note
        return None

    rows = []
    problems = []
    seen = set()
    for d in sorted(rs, key=lambda d: (d.file, d.path, d.loose)):
        if (d.path, d.loose) in seen:
            continue
        seen.add((d.path, d.loose))
        row = {"decl": d, "status": None, "note": ""}
        note = find_note(d)
        owner_missing = d.owner and d.owner not in mb_types and d.synthesized
        status = match.status(d)
        if status:
            if base_match is not None and base_match.status(d) is None:
                status = status.replace("present", "added")
            row["status"] = status
            if note:
                problems.append(f"stale note (the symbol matches now): {note['symbol']}")
        elif note:
            row["status"] = note["status"]
            row["note"] = note["reason"]
            if note["status"] == "compatible":
                provided_by = note.get("mailbox", d.path)
                if provided_by not in mb_paths:
                    problems.append(f"note says compatible, but Mailbox has no {provided_by}")
        elif owner_missing:
            row["status"] = "not provided"
            row["note"] = f"`{d.owner}` is not provided"
        else:
            mailbox = [m.raw for m in mb_paths.get(d.path, [])]
            problems.append(f"no status: {d.loose}" + (f"\n    Mailbox has: {mailbox}" if mailbox else ""))
        if d.deprecated and row["status"] is not None:
            message = f": {d.deprecation_message}" if d.deprecation_message else ""
            row["note"] = (f"Deprecated in ReactiveSwift{message}. " + row["note"]).strip()
        rows.append(row)

    for index, note in enumerate(notes):
        if index not in used_notes:
            problems.append(f"note matches no ReactiveSwift symbol: {note['symbol']} {note.get('signature', '')}")

    # The two unconditionally unavailable declarations of `Deprecations+Removals.swift` are not
    # in the symbol graph (the extractor skips unavailable symbols); listed by hand in the notes
    # module so that the table names them.
    if args.output:
        write_table(args.output, rows, rs_api_notes.UNAVAILABLE, args.baseline_name if base is not None else None)

    counts = collections.Counter(r["status"] or "NO STATUS" for r in rows)
    print(f"{len(rows)} ReactiveSwift symbols: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    for problem in problems:
        print("error:", problem, file=sys.stderr)
    return 1 if problems else 0


# --------------------------------------------------------------------------------------------
# The table

GROUPS = [
    ("Signal", ["Signal.swift", "Signal.Observer.swift", "Observer.swift"]),
    ("SignalProducer", ["SignalProducer.swift"]),
    ("Flattening", ["Flatten.swift"]),
    ("Event", ["Event.swift"]),
    ("Properties", ["Property.swift"]),
    ("ValidatingProperty", ["ValidatingProperty.swift"]),
    ("Action", ["Action.swift"]),
    ("Bindings", ["UnidirectionalBinding.swift"]),
    ("Disposables", ["Disposable.swift"]),
    ("Lifetime", ["Lifetime.swift"]),
    ("Schedulers", ["Scheduler.swift"]),
    ("Logging", ["EventLogger.swift"]),
    ("Reactive extensions", ["Reactive.swift", "FoundationExtensions.swift", "?"]),
    ("Utilities (Atomic, Bag, OptionalProtocol, Result)", ["Atomic.swift", "Bag.swift", "Optional.swift", "ResultExtensions.swift"]),
    ("Uninhabited-type guards (deprecated in ReactiveSwift)", ["UninhabitedTypeGuards.swift"]),
]


def write_table(path: str, rows: list[dict], unavailable: list[dict], baseline_name: str | None) -> None:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    counts = collections.Counter(r["status"] or "missing" for r in rows)
    out = []
    out.append("# ReactiveSwift 7.2.1 API in Mailbox\n")
    out.append(
        "Every public symbol of ReactiveSwift 7.2.1 — types, initialisers, methods, properties,\n"
        "operators and every overload — with its status in Mailbox. Generated by\n"
        "`docs/tools/rs-api-diff.sh` from the two modules' symbol graphs (`swift-symbolgraph-extract`);\n"
        "the reasons come from `docs/tools/rs_api_notes.py`. Do not edit by hand: change the code or\n"
        "the notes and run the script, which fails when a symbol has no status or a note is stale.\n"
    )
    out.append(
        "Signatures are compared after normalisation: argument labels, parameter and result types,\n"
        "default arguments (`=`), and every generic constraint must match; internal parameter names,\n"
        "`any`, `@escaping` and type-alias spellings do not count; a method's own generic parameters\n"
        "are renamed by position (`T0`, `T1`, …).\n"
    )
    out.append("Statuses:\n")
    out.append("- **present** — Mailbox declares the same signature.")
    out.append("- **present (Swift 6)** — the same signature once `@Sendable` closures and `Sendable`")
    out.append("  requirements are set aside: the documented Swift 6 differences")
    out.append("  ([StreamContracts.md](StreamContracts.md#swift-6-differences-from-reactiveswift)).")
    out.append("- **present (more general)** — Mailbox's overload has fewer constraints and covers")
    out.append("  this one (ReactiveSwift adds constrained copies, e.g. for `Never`, that Mailbox needs not).")
    if baseline_name:
        out.append(f"- **added**, **added (Swift 6)**, **added (more general)** — as the three above, and new")
        out.append(f"  since `{baseline_name}` (issue #11).")
    out.append("- **compatible** — Mailbox's declaration differs, but ReactiveSwift's call sites compile")
    out.append("  and behave the same; the note says how.")
    out.append("- **missing** — not in Mailbox and not explained yet: the script fails while any is left.")
    out.append("- **not provided** — with the reason and the replacement (also in")
    out.append("  [StreamContracts.md](StreamContracts.md#not-provided)).\n")
    out.append("Totals: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + ".\n")

    by_file = collections.defaultdict(list)
    for r in rows:
        by_file[r["decl"].file].append(r)
    grouped = set()
    for title, files in GROUPS:
        group_rows = [r for f in files for r in by_file.get(f, [])]
        grouped.update(files)
        if not group_rows:
            continue
        out.append(f"## {title}\n")
        out.append("| ReactiveSwift declaration | Status | Note |")
        out.append("|---|---|---|")
        for r in sorted(group_rows, key=lambda r: (r["decl"].path.lower(), r["decl"].loose)):
            d = r["decl"]
            where = ""
            constraints = d.loose.split(" where ", 1)
            if len(constraints) == 2:
                where = f" where {constraints[1]}"
            declaration = f"`{d.display_path}` — `{cell(d.raw)}`"
            ext = extension_constraints(d.symbol)
            if ext:
                declaration += f" (in `extension where {cell(', '.join(ext))}`)"
            status = r["status"] or "**missing**"
            out.append(f"| {declaration} | {status} | {cell(r['note'])} |")
        out.append("")
    leftover = [f for f in by_file if f not in grouped]
    if leftover:
        raise SystemExit(f"files without a group: {leftover}")

    out.append("## Unavailable in ReactiveSwift (`Deprecations+Removals.swift`)\n")
    out.append("Declared `@available(*, unavailable)` in ReactiveSwift itself (so absent from its symbol")
    out.append("graph); no code can call them.\n")
    out.append("| ReactiveSwift declaration | Status | Note |")
    out.append("|---|---|---|")
    for u in unavailable:
        out.append(f"| `{cell(u['declaration'])}` | {u['status']} | {cell(u['reason'])} |")
    out.append("")
    with open(path, "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    sys.exit(main())
